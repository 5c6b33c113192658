import { stableFraction } from "./hash";

/**
 * Spintax (CONTRACT section 11): `{Hi|Hello|Hey}` picks one option per lead, stably. A group is a
 * single `{`, at least one `|`, and a `}`, with no other single brace inside; `{{variables}}` are
 * neither groups nor their separators, but may sit inside an option (`{Hi {{first_name}}|Hello}`).
 * Anything else with braces (`{not spintax}`, JSON in a body, a nested `{a {b|c}}` whose outer
 * braces then stay text) is left as written.
 *
 * Order: spin the TEMPLATE first, then substitute variables (template.ts). A lead's value that
 * contains `|` or braces is then never spun, and a variable inside an option is rendered only when
 * its option is chosen.
 */

type SpintaxPart = { kind: "text"; text: string } | { kind: "group"; options: string[]; offset: number };

/** The index just past the `}}` closing a variable that opens at `at`, or -1 when never closed. */
function variableEnd(text: string, at: number): number {
  const close = text.indexOf("}}", at + 2);
  return close < 0 ? -1 : close + 2;
}

/** Reads a group opening with the single `{` at `at`; null when the braces there are not spintax. */
function readGroup(text: string, at: number): { options: string[]; end: number } | null {
  const options: string[] = [];
  let current = "";
  let j = at + 1;
  while (j < text.length) {
    if (text.startsWith("{{", j)) {
      const end = variableEnd(text, j);
      if (end < 0) return null;
      current += text.slice(j, end);
      j = end;
      continue;
    }
    const c = text[j]!;
    if (c === "{") return null;
    if (c === "}") {
      options.push(current);
      return options.length >= 2 ? { options, end: j + 1 } : null;
    }
    if (c === "|") {
      options.push(current);
      current = "";
    } else current += c;
    j += 1;
  }
  return null;
}

export function parseSpintax(text: string): SpintaxPart[] {
  const parts: SpintaxPart[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("{{", i)) {
      const end = variableEnd(text, i);
      const stop = end < 0 ? text.length : end;
      literal += text.slice(i, stop);
      i = stop;
      continue;
    }
    const group = text[i] === "{" ? readGroup(text, i) : null;
    if (group) {
      if (literal) parts.push({ kind: "text", text: literal });
      literal = "";
      parts.push({ kind: "group", options: group.options, offset: i });
      i = group.end;
    } else {
      literal += text[i]!;
      i += 1;
    }
  }
  if (literal) parts.push({ kind: "text", text: literal });
  return parts;
}

/**
 * Who the text is spun for. `part` keeps the subject's and the body's choices independent (their
 * first groups would otherwise always pick the same index).
 */
export type SpinSeed = {
  recordId: number | string;
  step: number;
  part?: string;
  /** The incremental distribution mode (CONTRACT 21.1): the record's k in its campaign; every group takes option k mod n. */
  moduloIndex?: number;
};

/**
 * The index chosen for the `position`-th group (0-based, in order of appearance) of a step. A hash of
 * (record id, step, part, position): the same record always gets the same words, on every retry; in
 * the incremental mode, the record's k mod the group's option count.
 */
export function spinChoice(seed: SpinSeed, position: number, optionCount: number): number {
  if (seed.moduloIndex !== undefined) return seed.moduloIndex % optionCount;
  const key = `spin:${seed.recordId}:${seed.step}:${seed.part ?? ""}:${position}`;
  return Math.floor(stableFraction(key) * optionCount);
}

/** The text with every spintax group replaced by its chosen option; everything else unchanged. */
export function spin(text: string, seed: SpinSeed): string {
  let position = 0;
  let out = "";
  for (const part of parseSpintax(text)) {
    if (part.kind === "text") out += part.text;
    else out += part.options[spinChoice(seed, position++, part.options.length)]!;
  }
  return out;
}
