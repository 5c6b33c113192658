/**
 * The one CSV writer: every CSV Salvo writes goes through it. RFC 4180 fields (quoted, quotes doubled,
 * when a value holds a quote, comma, CR or LF; null is an empty field), CRLF line ends, and the OWASP rule
 * against formula injection: a value a spreadsheet would run as a formula (one starting with `=`, `+`, `-`,
 * `@`, tab or CR) gets a leading `'`, so `=HYPERLINK(…)` or `+1+cmd|…` opens as text.
 * A value made only of digits, spaces and `+ - ( ) .` (a phone number, a signed number) can call no function,
 * reference or command, so it is written as it is: `+33 1 23 45 67 89` stays a phone number.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER_LIKE = /^[0-9 ().+-]*$/;

/** One field of a line. */
export function csvField(value: string | null): string {
  if (value === null) return "";
  const safe = FORMULA_START.test(value) && !NUMBER_LIKE.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One line, CRLF included. */
export function csvLine(fields: readonly (string | null)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}
