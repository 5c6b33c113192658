/**
 * The text/plain form of an email's HTML body: what a reader without HTML sees, what a campaign
 * that sends plain text sends, and what the reply and bounce rules read in an HTML-only message.
 *
 * `html-to-text` (html-to-text org, MIT, maintained; htmlparser2 underneath, no DOM, so it runs on
 * Workers) does the work: entities decoded (`&rsquo;` is ’), links keep their address after their
 * text (`Book a call (https://…)`, quoted or not), tables keep their cells apart in columns, list
 * items start with "- ", images give their alt text, <head>/<script>/<style> say nothing.
 *
 * Bounded on hostile input: htmlparser2 keeps its stack of open elements with Array.unshift, so
 * thousands of unclosed elements cost quadratic time; only the first MAX_ELEMENTS elements are
 * read (far more than an email has; the text then ends with "..."), and nesting past MAX_DEPTH
 * elements is cut. Both are linear to find.
 */
import { compile } from "html-to-text";
import { Parser } from "htmlparser2";

const MAX_ELEMENTS = 5_000;
const MAX_DEPTH = 64;

const convert = compile({
  wordwrap: false,
  // Every table is read as a grid: layout tables (one column) come out as their text, data tables
  // as aligned columns instead of cells run together.
  tables: true,
  formatters: {
    imageAlt: (elem, _walk, builder) => builder.addInline(elem.attribs?.alt ?? ""),
  },
  selectors: [
    { selector: "a", options: { linkBrackets: ["(", ")"], hideLinkHrefIfSameAsText: true } },
    { selector: "img", format: "imageAlt" },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: "ul", options: { itemPrefix: "- " } },
    { selector: "table", options: { uppercaseHeaderCells: false, maxColumnWidth: 1_000 } },
  ],
  limits: { maxDepth: MAX_DEPTH, ellipsis: "..." },
});

/** Where the MAX_ELEMENTS+1-th start tag begins, or the length when there are fewer. */
function elementsEnd(html: string): number {
  let count = 0;
  for (let at = html.indexOf("<"); at >= 0; at = html.indexOf("<", at + 1)) {
    const next = html.charCodeAt(at + 1);
    const letter = (next >= 65 && next <= 90) || (next >= 97 && next <= 122);
    if (letter && ++count > MAX_ELEMENTS) return at;
  }
  return html.length;
}

export function htmlToText(html: string): string {
  const end = elementsEnd(html);
  const text = convert(end < html.length ? html.slice(0, end) : html).trim();
  return end < html.length ? `${text}\n...` : text;
}

/**
 * Where the first element that `matches` starts (its "<"), or null; read with htmlparser2 within the
 * same bounds as htmlToText, so the time is linear in the input.
 */
export function firstElementAt(html: string, matches: (name: string, attributes: Record<string, string>) => boolean): number | null {
  let found: number | null = null;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (found === null && matches(name, attributes)) {
          found = parser.startIndex;
          parser.pause();
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html.slice(0, elementsEnd(html)));
  return found;
}
