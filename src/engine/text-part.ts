import { htmlToText } from "../mail/html-text";
import { parseTemplate, variableValue, type TemplateLead } from "../sequences/template";

/**
 * The text/plain part of a campaign email, without converting every lead's HTML (issue 27: the
 * conversion was a tenth of the sending engine's CPU). A body's text is converted once per template
 * (after spintax) and signature, with a mark where each variable goes, and each lead's values are
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

/** Marks: private-use characters, which a template or value has no reason to hold (one that does is converted whole). */
const MARK = /\uE000(\d+)\uE001/g;
const MARK_CHARS = /[\uE000-\uE003]/;
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
/** Shapes kept per isolate (templates after spintax, by signature): a campaign's steps and variants fit many times over. */
const MAX_SHAPES = 256;

/** Renders a body (a template, after spintax) for a lead, as the email's HTML part has it. */
export type RenderBody = (template: string, lead: TemplateLead) => string;

interface Shape {
  /** The text around the marks: pieces.length === holes.length + 1. */
  pieces: string[];
  /** Each mark's variable, in the order the text has them. */
  holes: { name: string }[];
}

/** A template seen once is only noted: a shape costs two conversions, worth it from the second email on. */
const shapes = new Map<string, Shape | null | "seen">();

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

/** A mark inside a tag (its attribute may show in the text), or inside an element of UNSAFE. */
function markedUnsafely(html: string, at: number): boolean {
  const before = html.slice(0, at);
  if (before.lastIndexOf("<") > before.lastIndexOf(">")) return true;
  return UNSAFE.some(([open, close]) => count(before, open) > count(before, close));
}

/** The template's text with a mark per variable, or null when its text depends on more than each value's characters. */
export function textShape(template: string, render: RenderBody): Shape | null {
  if (MARK_CHARS.test(template)) return null;
  const variables = parseTemplate(template).flatMap((part) => (part.kind === "variable" ? [part] : []));
  const probe = (mark: (k: number) => string) => {
    let spliced = "";
    let from = 0;
    const custom: Record<string, string> = {};
    variables.forEach((variable, k) => {
      spliced += `${template.slice(from, variable.offset)}{{salvo_mark_${k}}}`;
      from = variable.offset + variable.raw.length;
      custom[`salvo_mark_${k}`] = mark(k);
    });
    return render(spliced + template.slice(from), { custom_fields: custom });
  };
  const html = probe(short);
  for (const found of html.matchAll(MARK)) if (markedUnsafely(html, found.index)) return null;
  const text = htmlToText(html);
  if (variables.length > 0 && text.replace(MARK, (_, k: string) => long(Number(k))) !== htmlToText(probe(long))) return null;
  const pieces: string[] = [];
  const holes: Shape["holes"] = [];
  let from = 0;
  for (const found of text.matchAll(MARK)) {
    pieces.push(text.slice(from, found.index));
    holes.push({ name: variables[Number(found[1])]!.name });
    from = found.index + found[0].length;
  }
  pieces.push(text.slice(from));
  return { pieces, holes };
}

/**
 * The text of `rendered` (the body `render` made of `template` for `lead`), from the template's
 * shape when the lead's values allow it. `key` names what `render` puts in besides the lead (the signature).
 */
export function textPart(template: string, key: string, lead: TemplateLead, render: RenderBody, rendered: string): string {
  const id = `${key}\u0000${template}`;
  let shape = shapes.get(id);
  if (shape === undefined) {
    if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value!);
    shapes.set(id, "seen");
    return htmlToText(rendered);
  }
  if (shape === "seen") {
    shape = textShape(template, render);
    shapes.set(id, shape);
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
