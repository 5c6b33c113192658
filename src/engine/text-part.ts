import { htmlToText } from "../mail/html-text";
import { variableValue, type TemplateLead } from "../sequences/template";
import { cutAtMarks, insideTag, MARK_CHARS, markedBody, ShapeCache, type RenderBody } from "./body-marks";

/**
 * The text/plain part of a campaign email, without converting every lead's HTML (issue 27: the
 * conversion was a tenth of the sending engine's CPU). A body's text is converted once per template
 * (after spintax) and signature, with a mark where each variable goes (body-marks.ts), and each lead's values are
 * put in the marks. That gives the same text as converting the lead's own HTML only where a value
 * is text the converter passes through as it is, so the fast way is taken only then; every other
 * email is converted whole, as before:
 *
 * - the shape: no variable inside a tag (an `href` or `alt` shows in the text, and a link whose text
 *   equals its address loses the address), inside a link, a table (column widths follow the cells'
 *   lengths) or preformatted text, and the same text whatever the marks' lengths;
 * - the values: each non-empty, no space at either end and no run of spaces or other white space
 *   (the converter folds white space), no mark character. A variable left empty takes its fallback,
 *   which is template HTML, so the email is converted whole.
 */

const MARK = /\uE000(\d+)\uE001/g;
const short = (k: number) => `\uE000${k}\uE001`;
const long = (k: number) => `\uE002${k}${"x".repeat(40)}\uE003`;
const PLAIN = /^[^\s\u200b]+(?: [^\s\u200b]+)*$/u;
/** Elements whose text a value must not be in (opening and closing tags). */
const UNSAFE: [RegExp, RegExp][] = [
  [/<a[\s>]/gi, /<\/a[\s>]/gi],
  [/<table[\s>]/gi, /<\/table[\s>]/gi],
  [/<pre[\s>]/gi, /<\/pre[\s>]/gi],
  [/<textarea[\s>]/gi, /<\/textarea[\s>]/gi],
];

interface Shape {
  /** The text around the marks: pieces.length === holes.length + 1. */
  pieces: string[];
  /** Each mark's variable, in the order the text has them. */
  holes: { name: string }[];
}

const shapes = new ShapeCache<Shape>();

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

/** A mark inside a tag (its attribute may show in the text), or inside an element of UNSAFE. */
function markedUnsafely(html: string, at: number): boolean {
  const before = html.slice(0, at);
  return insideTag(html, at) || UNSAFE.some(([open, close]) => count(before, open) > count(before, close));
}

/** The template's text with a mark per variable, or null when its text depends on more than each value's characters. */
export function textShape(template: string, render: RenderBody): Shape | null {
  const marked = markedBody(template, render, short);
  if (marked === null) return null;
  const { html, names } = marked;
  for (const found of html.matchAll(MARK)) if (markedUnsafely(html, found.index)) return null;
  const text = htmlToText(html);
  if (names.length > 0 && text.replace(MARK, (_, k: string) => long(Number(k))) !== htmlToText(markedBody(template, render, long)!.html)) return null;
  const { pieces, found } = cutAtMarks(text, MARK);
  return { pieces, holes: found.map((k) => ({ name: names[Number(k)]! })) };
}

/**
 * The text of `rendered` (the body `render` made of `template` for `lead`), from the template's
 * shape when the lead's values allow it. `key` names what `render` puts in besides the lead (the signature).
 */
export function textPart(template: string, key: string, lead: TemplateLead, render: RenderBody, rendered: string): string {
  const id = `${key}\u0000${template}`;
  let shape = shapes.find(id);
  if (shape === "build") {
    shape = textShape(template, render);
    shapes.keep(id, shape);
  }
  if (shape === null) return htmlToText(rendered);
  let text = shape.pieces[0]!;
  for (const [k, hole] of shape.holes.entries()) {
    const value = variableValue(lead, hole.name);
    if (!PLAIN.test(value) || MARK_CHARS.test(value)) return htmlToText(rendered);
    text += value + shape.pieces[k + 1]!;
  }
  return text;
}
