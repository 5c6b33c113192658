/**
 * The return date an out-of-office answer states ("back on 12 March", "bis zum 15.03.2026", "de retour
 * le 3 mars"), as epoch ms at 00:00 UTC of that day (the sender's time zone is unknown). Conservative:
 * a date counts only next to a word that says "back", "until" or "return" in one of the languages
 * below, a date without a year is the next such day from the day received, and an ambiguous or
 * implausible date gives null.
 */

type Lang = "en" | "de" | "fr" | "es" | "it" | "nl" | "pt";

const MONTHS: Record<string, number> = {};
const MONTH_NAMES: [number, string[]][] = [
  [1, ["january", "jan", "januar", "jänner", "janvier", "janv", "enero", "ene", "gennaio", "januari", "janeiro"]],
  [2, ["february", "feb", "februar", "février", "fevrier", "févr", "fevr", "febrero", "febbraio", "februari", "fevereiro", "fev"]],
  [3, ["march", "mar", "märz", "maerz", "mär", "mrz", "mars", "marzo", "maart", "mrt", "março", "marco"]],
  [4, ["april", "apr", "avril", "avr", "abril", "abr", "aprile"]],
  [5, ["may", "mai", "mayo", "maggio", "mei", "maio"]],
  [6, ["june", "jun", "juni", "juin", "junio", "giugno", "giu", "junho"]],
  [7, ["july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug", "julho"]],
  [8, ["august", "aug", "août", "aout", "agosto", "augustus"]],
  [9, ["september", "sep", "sept", "septembre", "septiembre", "setiembre", "settembre", "setembro"]],
  [10, ["october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott", "outubro"]],
  [11, ["november", "nov", "novembre", "noviembre", "novembro"]],
  [12, ["december", "dec", "dezember", "dez", "décembre", "decembre", "déc", "diciembre", "dic", "dicembre", "dezembro"]],
];
for (const [month, names] of MONTH_NAMES) for (const name of names) MONTHS[name] = month;

const MONTH = `(${Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join("|")})`;

// Day then month name: "12 March", "12th of March", "12. März", "1er mars", "5 de marzo de 2026".
const DAY_MONTH = new RegExp(
  `(?<![\\p{L}\\d])(\\d{1,2})(?:st|nd|rd|th|er|º|°|\\.)?\\s*(?:de\\s+|of\\s+)?${MONTH}\\.?(?![\\p{L}])(?:,?\\s*(?:de\\s+)?(\\d{4}))?`,
  "giu",
);
// Month name then day: "March 12", "March 3rd, 2026".
const MONTH_DAY = new RegExp(`(?<![\\p{L}])${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?(?!\\d)(?:,?\\s*(\\d{4}))?`, "giu");
const ISO = /(?<![\d./-])(\d{4})-(\d{2})-(\d{2})(?![\d])/g;
// 15.03.2026, 15.03.26, 15.03. (German without a year), 15/03/2026, 15-03-2026.
const NUMERIC = /(?<![\d./-])(\d{1,2})([./-])(\d{1,2})(?:\2(\d{4}|\d{2})(?!\d|[./-]\d)|(\.)(?!\d))/g;

// Words that put a return date after them, by language; the language settles dd/mm against mm/dd.
const BEFORE: [Lang, RegExp][] = [
  ["en", /\b(?:back|return|returning|returns|until|till|through|thru|re-?open|available again)\b/i],
  ["de", /(?:\bbis\b|zurück|wieder)/i],
  ["fr", /(?:de retour|jusqu'au|jusqu’au|jusqu'à|retour|rentre)/i],
  ["es", /(?:hasta|regreso|regresaré|regresare|de vuelta|volveré|volvere|vuelvo|reincorporo)/i],
  ["it", /(?:fino al|fino a|rientro|rientrerò|rientrero|di ritorno|torno|tornerò)/i],
  ["nl", /(?:\btot\b|terug|weer aanwezig|weer op kantoor)/i],
  ["pt", /(?:(?<!\p{L})até(?!\p{L})|retorno|retornarei|de volta|regresso)/iu],
];
// Words after a date that make it the return ("Ab dem 16.03. bin ich wieder im Büro").
const AFTER: [Lang, RegExp][] = [
  ["de", /(?:wieder|zurück)/i],
  ["fr", /de retour/i],
  ["es", /de vuelta|regreso/i],
  ["it", /di ritorno|rientro/i],
  ["nl", /\bweer\b|terug/i],
  ["pt", /de volta|retorno/i],
];

interface Found {
  start: number;
  end: number;
  day: number;
  month: number | null;
  /** For numeric dates with both parts ≤ 12 under "/" or "-": the other reading, month first. */
  swapped: boolean;
  year: number | null;
}

function found(text: string): Found[] {
  const all: Found[] = [];
  const year = (value: string | undefined) =>
    value === undefined ? null : value.length === 2 ? 2000 + Number(value) : Number(value);
  for (const m of text.matchAll(DAY_MONTH)) {
    all.push({ start: m.index, end: m.index + m[0].length, day: Number(m[1]), month: MONTHS[m[2]!.toLowerCase()] ?? null, swapped: false, year: year(m[3]) });
  }
  for (const m of text.matchAll(MONTH_DAY)) {
    all.push({ start: m.index, end: m.index + m[0].length, day: Number(m[2]), month: MONTHS[m[1]!.toLowerCase()] ?? null, swapped: false, year: year(m[3]) });
  }
  for (const m of text.matchAll(ISO)) {
    all.push({ start: m.index, end: m.index + m[0].length, day: Number(m[3]), month: Number(m[2]), swapped: false, year: Number(m[1]) });
  }
  for (const m of text.matchAll(NUMERIC)) {
    const dotted = m[2] === ".";
    all.push({
      start: m.index,
      end: m.index + m[0].length,
      day: Number(m[1]),
      month: Number(m[3]),
      swapped: !dotted,
      year: year(m[4]),
    });
  }
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  return all.filter((date, i) => i === 0 || date.start >= all[i - 1]!.end);
}

function utcDay(year: number, month: number, day: number): number | null {
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const time = Date.UTC(year, month - 1, day);
  const check = new Date(time);
  return check.getUTCMonth() === month - 1 && check.getUTCDate() === day ? time : null;
}

const DAY_MS = 86_400_000;
const YEAR_MS = 366 * DAY_MS;

function resolve(date: Found, lang: Lang, receivedAt: number): number | null {
  let { day, month } = date;
  if (month === null) return null;
  if (date.swapped) {
    // dd/mm unless only mm/dd fits; English leaves an ambiguous one unread (British and American differ).
    if (month > 12 && day <= 12) [day, month] = [month, day];
    else if (lang === "en" && day <= 12 && month <= 12 && day !== month) return null;
  }
  const received = new Date(receivedAt);
  const today = Date.UTC(received.getUTCFullYear(), received.getUTCMonth(), received.getUTCDate());
  if (date.year !== null) {
    const time = utcDay(date.year, month, day);
    // A date in the past or far ahead is a stale or mistyped notice, not a return date.
    return time !== null && time >= today && time - today <= YEAR_MS ? time : null;
  }
  const thisYear = utcDay(received.getUTCFullYear(), month, day);
  if (thisYear !== null && thisYear >= today) return thisYear;
  return utcDay(received.getUTCFullYear() + 1, month, day);
}

// Sentences end at a full stop before a capital or at a blank line (mail wraps lines mid-sentence).
const SENTENCE_END = /[.!?]\s+(?=\p{Lu})|\n\s*\n/u;

// Responders state the date near the top; a cap keeps the scan cheap on a long message.
const SCAN_CHARS = 4000;

export function parseReturnDate(fullText: string, receivedAt: number): number | null {
  const text = fullText.slice(0, SCAN_CHARS);
  const dates = found(text);
  let previousEnd = 0;
  for (const date of dates) {
    const window = text.slice(Math.max(previousEnd, date.start - 60), date.start);
    // Only the sentence the date stands in.
    const before = window.split(SENTENCE_END).pop() ?? "";
    const next = dates.find((d) => d.start >= date.end)?.start ?? text.length;
    const after = text.slice(date.end, Math.min(next, date.end + 40)).split(/[.!?](?=\s)|\n\s*\n/)[0] ?? "";
    previousEnd = date.end;
    const lang = BEFORE.find(([, pattern]) => pattern.test(before))?.[0] ?? AFTER.find(([, pattern]) => pattern.test(after))?.[0];
    if (!lang) continue;
    const time = resolve(date, lang, receivedAt);
    if (time !== null) return time;
  }
  return null;
}
