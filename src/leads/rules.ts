/** Sorting an uploaded lead list into what will be stored and what is counted as skipped. */
import { isValidEmail, normaliseEmail } from "../mail/address";

interface UploadedLead {
  email: string;
  [field: string]: unknown;
}

interface SortedUpload<T extends UploadedLead> {
  /** One entry per distinct valid address, with the email lower-cased and trimmed. */
  unique: T[];
  duplicateCount: number;
  invalidEmailCount: number;
}

export function sortUpload<T extends UploadedLead>(leads: T[]): SortedUpload<T> {
  const seen = new Set<string>();
  const unique: T[] = [];
  let duplicateCount = 0;
  let invalidEmailCount = 0;
  for (const lead of leads) {
    const email = normaliseEmail(lead.email);
    if (!isValidEmail(email)) invalidEmailCount += 1;
    else if (seen.has(email)) duplicateCount += 1;
    else {
      seen.add(email);
      unique.push({ ...lead, email });
    }
  }
  return { unique, duplicateCount, invalidEmailCount };
}
