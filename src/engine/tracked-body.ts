import { escapeHtml, variableValue, type TemplateLead } from "../sequences/template";
import { endPixel, trackLinks, type Tracking } from "../tracking/links";
import { cutAtMarks, insideTag, MARK_CHARS, markedBody, ShapeCache, type RenderBody } from "./body-marks";

/**
 * A campaign email's tracked HTML without running the HTML rewriter over every email (issue 27: that
 * pass was about 13% of the sending engine's rate). A body's template is tracked once per signature
 * and tracking (host, opens, clicks), with marks where the lead's values, each link's click token
 * and the open token go; each email puts its own in. That is the rewriter's own output for the email
 * wherever the rewriter sees the same elements: so the shape is refused when a variable sits inside a
 * tag (an `href`: which links are tracked, and where to, would follow the lead), and the email is
 * tracked whole when a value is empty (its fallback is template HTML), breaks a line or holds a mark
 * character. A value elsewhere is escaped text, which changes no element.
 */

export interface BodySource {
  /** What `render` puts in besides the lead (the signature). */
  key: string;
  template: string;
  render: RenderBody;
  lead: TemplateLead;
  /** How much of the HTML the body is: the rest (the unsubscribe footer) is added as it is. */
  length: number;
}

type Slot = { kind: "value"; name: string } | { kind: "click"; url: string } | { kind: "open" };

interface Shape {
  /** The tracked body around the slots: pieces.length === slots.length + 1. */
  pieces: string[];
  slots: Slot[];
  pixelPlaced: boolean;
}

const SLOT = /\uE000(v\d+|c\d+|o)\uE001/g;
const shapes = new ShapeCache<Shape>();

async function trackedShape(template: string, render: RenderBody, tracking: Tracking): Promise<Shape | null> {
  const marked = markedBody(template, render, (k) => `\uE000v${k}\uE001`);
  if (marked === null) return null;
  const { html, names } = marked;
  const values = [...html.matchAll(SLOT)];
  if (values.some((found) => insideTag(html, found.index))) return null;
  const urls: string[] = [];
  const out = await trackLinks(html, {
    base: tracking.base,
    open: tracking.open === null ? null : "\uE000o\uE001",
    click:
      tracking.click === null
        ? null
        : async (url) => {
            urls.push(url);
            return `\uE000c${urls.length - 1}\uE001`;
          },
  });
  const { pieces, found } = cutAtMarks(out.html, SLOT);
  const slots = found.map((mark): Slot => {
    const index = Number(mark.slice(1));
    return mark[0] === "v" ? { kind: "value", name: names[index]! } : mark[0] === "c" ? { kind: "click", url: urls[index]! } : { kind: "open" };
  });
  // Every value where the body had it, and no link whose address holds one.
  if (slots.filter((slot) => slot.kind === "value").length !== values.length || urls.some((url) => MARK_CHARS.test(url))) return null;
  return { pieces, slots, pixelPlaced: out.pixelPlaced };
}

/** The email's tracked HTML (`html`: `body` rendered, then its footer) from its template's shape, or null when it has none or the lead's values do not fit it. */
export async function trackedBody(body: BodySource, html: string, tracking: Tracking): Promise<string | null> {
  const id = `${tracking.base}\u0000${tracking.open !== null}\u0000${tracking.click !== null}\u0000${body.key}\u0000${body.template}`;
  let shape = shapes.find(id);
  if (shape === "build") {
    shape = await trackedShape(body.template, body.render, tracking);
    shapes.keep(id, shape);
  }
  if (shape === null) return null;
  const values = new Map<string, string>();
  for (const slot of shape.slots) {
    if (slot.kind !== "value" || values.has(slot.name)) continue;
    const value = variableValue(body.lead, slot.name);
    if (value.trim() === "" || /[\r\n]/.test(value) || MARK_CHARS.test(value)) return null;
    values.set(slot.name, escapeHtml(value));
  }
  let out = shape.pieces[0]!;
  for (const [k, slot] of shape.slots.entries()) {
    out += slot.kind === "value" ? values.get(slot.name)! : slot.kind === "click" ? await tracking.click!(slot.url) : tracking.open!;
    out += shape.pieces[k + 1]!;
  }
  const rest = html.slice(body.length);
  return tracking.open !== null && !shape.pixelPlaced ? out + rest + endPixel(tracking.base, tracking.open) : out + rest;
}
