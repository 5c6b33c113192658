/** Sorting an uploaded lead list into what will be stored and what is counted as skipped. */
import { isValidEmail, normaliseEmail } from "../mail/address";
import { isTimeZone } from "../platform/zoned-time";

interface UploadedLead {
  email: string;
  [field: string]: unknown;
}

interface SortedUpload<T extends UploadedLead> {
  /** One entry per distinct valid address, with the email lower-cased and trimmed. */
  unique: T[];
  duplicateCount: number;
  invalidEmailCount: number;
  /** Kept leads whose given zone is not a known IANA name (stored as null, CONTRACT 23.1). */
  invalidTimezoneCount: number;
}

/** The names a lead's zone is given under (CONTRACT 23.1), the first one present winning. */
export const TIMEZONE_FIELDS = ["timezone", "time_zone", "lead_timezone", "schedule_timezone", "tz"] as const;

/**
 * A lead's zone as given: the top-level field or one of its aliases, else a `custom_fields` key of
 * those names in any case. `given` is false when no such field holds a non-empty value; `zone` is
 * null when the value is not a known IANA name (never guessed from location or phone).
 */
export function leadTimezone(lead: Record<string, unknown>): { given: boolean; zone: string | null } {
  let value = TIMEZONE_FIELDS.map((name) => lead[name]).find((v) => v !== undefined && v !== null && v !== "");
  const custom = lead.custom_fields;
  if (value === undefined && custom && typeof custom === "object") {
    const byName = new Map(Object.entries(custom).map(([key, v]) => [key.trim().toLowerCase(), v]));
    value = TIMEZONE_FIELDS.map((name) => byName.get(name)).find((v) => v !== undefined && v !== null && v !== "");
  }
  if (value === undefined) return { given: false, zone: null };
  const name = typeof value === "string" ? value.trim() : "";
  return { given: true, zone: name !== "" && isTimeZone(name) ? canonicalZone(name) : null };
}

/** The zone's canonical spelling (`europe/paris` is stored as `Europe/Paris`). */
function canonicalZone(name: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
}

export function sortUpload<T extends UploadedLead>(leads: T[]): SortedUpload<T> {
  const seen = new Set<string>();
  const unique: T[] = [];
  let duplicateCount = 0;
  let invalidEmailCount = 0;
  let invalidTimezoneCount = 0;
  for (const lead of leads) {
    const email = normaliseEmail(lead.email);
    if (!isValidEmail(email)) invalidEmailCount += 1;
    else if (seen.has(email)) duplicateCount += 1;
    else {
      seen.add(email);
      const { given, zone } = leadTimezone(lead);
      if (given && zone === null) invalidTimezoneCount += 1;
      unique.push({ ...lead, email, timezone: zone });
    }
  }
  return { unique, duplicateCount, invalidEmailCount, invalidTimezoneCount };
}
