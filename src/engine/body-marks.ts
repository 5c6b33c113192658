import { parseTemplate, type TemplateLead } from "../sequences/template";

/**
 * What the text part (text-part.ts) and the tracked HTML (tracked-body.ts) of a campaign email share
 * to work once per template instead of once per email: the body rendered with a mark in place of
 * each variable, and a cache of what each found for a template. Marks are private-use characters,
 * which a template or value has no reason to hold; one that does is worked out whole, per email.
 */

export const MARK_CHARS = /[\uE000-\uE003]/;

/** Renders a body (a template, after spintax) for a lead, as the email's HTML part has it. */
export type RenderBody = (template: string, lead: TemplateLead) => string;

/**
 * The body rendered with `mark(k)` in place of its k-th variable (fallback and all), and the variables'
 * names in order; null when the template holds a mark character itself (it has no shape).
 */
export function markedBody(template: string, render: RenderBody, mark: (k: number) => string): { html: string; names: string[] } | null {
  if (MARK_CHARS.test(template)) return null;
  const variables = parseTemplate(template).flatMap((part) => (part.kind === "variable" ? [part] : []));
  let spliced = "";
  let from = 0;
  const custom: Record<string, string> = {};
  variables.forEach((variable, k) => {
    spliced += `${template.slice(from, variable.offset)}{{salvo_mark_${k}}}`;
    from = variable.offset + variable.raw.length;
    custom[`salvo_mark_${k}`] = mark(k);
  });
  return { html: render(spliced + template.slice(from), { custom_fields: custom }), names: variables.map((variable) => variable.name) };
}

/** Whether `at` is inside a tag of `html` (an attribute, or a comment: taken as one, to be safe). */
export function insideTag(html: string, at: number): boolean {
  const before = html.slice(0, at);
  return before.lastIndexOf("<") > before.lastIndexOf(">");
}

/** `text` cut at each match of `marks` (a global pattern with one group): the pieces around them, and each match's group. */
export function cutAtMarks(text: string, marks: RegExp): { pieces: string[]; found: string[] } {
  const pieces: string[] = [];
  const found: string[] = [];
  let from = 0;
  for (const match of text.matchAll(marks)) {
    pieces.push(text.slice(from, match.index));
    found.push(match[1]!);
    from = match.index + match[0].length;
  }
  pieces.push(text.slice(from));
  return { pieces, found };
}

/** Shapes kept per isolate (templates after spintax, by signature and tracking): a campaign's steps and variants fit many times over. */
const MAX_SHAPES = 256;
/**
 * And at most this many characters of keys and shapes, so that large bodies (a step takes up to
 * 100,000 characters) cannot fill an isolate's memory: a few megabytes a cache.
 */
const MAX_CHARACTERS = 2_000_000;

interface Entry<T> {
  shape: T | null | "seen";
  characters: number;
}

/**
 * What was found for each template (null: it has no shape), measured by its pieces' characters. A template seen once is only noted: a
 * shape costs more than working out one email whole, and pays from the second email on. The oldest
 * entries go first past MAX_SHAPES or MAX_CHARACTERS.
 */
export class ShapeCache<T extends { pieces: string[] }> {
  private readonly entries = new Map<string, Entry<T>>();
  private characters = 0;

  /** The shape of `id`; "build" the second time it is asked for; null the first time, or when it has none. */
  find(id: string): T | null | "build" {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      this.set(id, "seen");
      return null;
    }
    return entry.shape === "seen" ? "build" : entry.shape;
  }

  keep(id: string, shape: T | null): void {
    this.set(id, shape);
  }

  private set(id: string, shape: T | null | "seen"): void {
    const characters = id.length + (shape === null || shape === "seen" ? 0 : shape.pieces.reduce((sum, piece) => sum + piece.length, 0));
    this.characters += characters - (this.entries.get(id)?.characters ?? 0);
    this.entries.delete(id);
    this.entries.set(id, { shape, characters });
    for (const [oldest, entry] of this.entries) {
      if (oldest === id || (this.entries.size <= MAX_SHAPES && this.characters <= MAX_CHARACTERS)) break;
      this.entries.delete(oldest);
      this.characters -= entry.characters;
    }
  }
}
