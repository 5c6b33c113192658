/** Timestamps leave the API as ISO 8601 in UTC with millisecond precision. */
export function iso(value: Date | number): string {
  return (typeof value === "number" ? new Date(value) : value).toISOString();
}

// Date and time each either extended (`2026-12-01T09:30:00`) or basic (`20261201T093000`); ISO 8601
// keeps one form per value. RFC 3339's space may stand for `T` in the extended form. A space may stand
// for the offset's `+`: a query string's unencoded `+` arrives as one, and nothing else is meant by it.
const ZONE = String.raw`(Z|[+ -]\d{2}(?::?\d{2})?)?`;
const FRACTION = String.raw`(?:[.,](\d+))?`;
const EXTENDED = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})[T ](\d{2})(?::(\d{2})(?::(\d{2})${FRACTION})?)?${ZONE}$`, "i");
const BASIC = new RegExp(String.raw`^(\d{4})(\d{2})(\d{2})T(\d{2})(?:(\d{2})(?:(\d{2})${FRACTION})?)?${ZONE}$`, "i");

/**
 * An ISO 8601 date-time as ms since the epoch, or null when the text is not one (CONTRACT 0: "In:
 * any ISO 8601"). The time may stop at the hour, minute or second, with any fraction of a second
 * (read to the millisecond); the zone is `Z`, `±hh:mm`, `±hhmm` or `±hh` (the `+` may arrive as a space). A time without a zone is
 * read as UTC, never in the runtime's zone. A date alone is not an instant: each route that takes one
 * says what day's moment it means.
 */
export function parseInstant(text: string): number | null {
  const match = EXTENDED.exec(text) ?? BASIC.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const millis = Number((match[7] ?? "").slice(0, 3).padEnd(3, "0"));
  const offset = zoneMinutes(match[8]);
  if (offset === null || hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.getTime() + ((hour * 60 + minute - offset) * 60 + second) * 1000 + millis;
}

/** A zone designator's offset east of UTC in minutes (none or `Z`: 0); null for one out of range. */
function zoneMinutes(zone: string | undefined): number | null {
  if (zone === undefined || zone.toUpperCase() === "Z") return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(3).replace(":", "") || 0);
  if (hours > 23 || minutes > 59) return null;
  return (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
}
