/** RFC 4180 CSV reading for lead imports: quoted fields, doubled quotes, CRLF or LF, a leading BOM. */

interface CsvSlice {
  rows: string[][];
  /** The character offset after the last row read: where the next slice starts. */
  next: number;
}

/**
 * Reads up to `maxRows` non-blank rows from `start`. Blank lines are skipped; an unterminated
 * quoted field runs to the end of the text.
 */
export function readCsvRows(text: string, start: number, maxRows: number): CsvSlice {
  const rows: string[][] = [];
  let i = start === 0 && text.charCodeAt(0) === 0xfeff ? 1 : start;
  while (i < text.length && rows.length < maxRows) {
    const row: string[] = [];
    let field = "";
    let quoted = false;
    let atFieldStart = true;
    for (; i < text.length; i++) {
      const ch = text[i]!;
      if (quoted) {
        if (ch !== '"') field += ch;
        else if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else if (ch === '"' && atFieldStart) {
        quoted = true;
        atFieldStart = false;
      } else if (ch === ",") {
        row.push(field);
        field = "";
        atFieldStart = true;
      } else if (ch === "\n" || ch === "\r") {
        i += ch === "\r" && text[i + 1] === "\n" ? 2 : 1;
        break;
      } else {
        field += ch;
        atFieldStart = false;
      }
    }
    row.push(field);
    if (row.length > 1 || row[0]!.trim() !== "") rows.push(row);
  }
  return { rows, next: i };
}

/** How many non-blank rows the text holds from `start`. */
export function countCsvRows(text: string, start: number): number {
  return readCsvRows(text, start, Number.POSITIVE_INFINITY).rows.length;
}

/** Column names (normalised) that fill a lead's own fields; every other column is a custom field. */
const FIELD_OF_COLUMN: Record<string, string> = {
  email: "email",
  email_address: "email",
  "e-mail": "email",
  first_name: "first_name",
  firstname: "first_name",
  last_name: "last_name",
  lastname: "last_name",
  company_name: "company_name",
  company: "company_name",
  phone_number: "phone_number",
  phone: "phone_number",
  website: "website",
  location: "location",
  linkedin_profile: "linkedin_profile",
  linkedin: "linkedin_profile",
  linkedin_url: "linkedin_profile",
  company_url: "company_url",
  timezone: "timezone",
  time_zone: "timezone",
  lead_timezone: "timezone",
  schedule_timezone: "timezone",
  tz: "timezone",
};

function normaliseColumn(name: string): string {
  return name.trim().toLowerCase().replace(/[\s-]+/g, "_");
}

/** The lead field each header column fills (null: a custom field under its header name); null when no column is the email. */
export function columnFields(header: string[]): (string | null)[] | null {
  const fields = header.map((name) => FIELD_OF_COLUMN[normaliseColumn(name)] ?? FIELD_OF_COLUMN[name.trim().toLowerCase()] ?? null);
  return fields.includes("email") ? fields : null;
}

interface CsvLead {
  email: string;
  [field: string]: unknown;
}

/** One row as a lead: empty cells are left out; a row without an email cell gets "" (counted invalid). */
export function rowToLead(header: string[], fields: (string | null)[], row: string[]): CsvLead {
  const lead: CsvLead = { email: "" };
  const custom: Record<string, string> = {};
  header.forEach((name, index) => {
    const value = (row[index] ?? "").trim();
    if (value === "") return;
    const field = fields[index];
    if (field) lead[field] = value;
    else custom[name.trim()] = value;
  });
  if (Object.keys(custom).length > 0) lead.custom_fields = custom;
  return lead;
}
