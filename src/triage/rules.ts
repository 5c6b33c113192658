import { classifyAutoReply } from "../replies/auto-reply";
import type { ParsedMessage } from "../mail/parsed";
import { replyText } from "../replies/reply-text";
import { BARE_OPT_OUTS, COURTESIES, GREETINGS, NEGATORS, PHRASES, type PhraseGroup, type PhraseRule } from "./phrases";

/**
 * The rules stage of the categoriser (CONTRACT section 20.4, step 1): deterministic, versioned and
 * explainable. It reads the reply's own words (quoted history and signature stripped by
 * src/replies/reply-text.ts), bounded: at most INPUT_LIMIT characters go into quote stripping and
 * TEXT_LIMIT characters of what remains into matching. Matching is one pass over the words against
 * plain word sequences (phrases.ts, expanded once per isolate), with no regular expression over the
 * text, so its time is linear in the (bounded) input whatever the input is.
 *
 * Precedence: a person's explicit request to stop (do not contact) wins, except in a machine's
 * answer (an out-of-office or an automated notice never asks for that); then wrong person / left the
 * company / mailbox no longer used (a departed person's auto-reply included); then out-of-office;
 * then other automated and catch-all notices.
 */

/** Bumped whenever a rule or its wording changes; part of every rule id (`dnc.remove-me@1`). */
export const RULES_VERSION = 1;

/** Characters of the stored reply that go into quote stripping (an HTML body is converted first). */
export const INPUT_LIMIT = 32 * 1024;
/** Characters of the reply's own words the rules read. */
export const TEXT_LIMIT = 4 * 1024;
const SUBJECT_LIMIT = 998;

export type RuleKind = "dnc" | "wrong_person" | "ooo" | "automated";

interface RuleInput {
  subject: string | null;
  body: string | null;
  /** The event says it is an out-of-office answer (pushed `is_ooo`, or the mailbox reader's header evidence). */
  isOoo: boolean;
}

export interface RuleVerdict {
  kind: RuleKind | null;
  /** `<rule>.<name>@<RULES_VERSION>`, e.g. `wrong_person.left-company@1`; null when nothing matched. */
  ruleId: string | null;
  /** What matched, for the reason and for support: the words, or the evidence. */
  evidence: string | null;
  /** The reply's own words as the rules read them (bounded), for the model stage. */
  text: string;
}

// ------------------------------------------------------------------ normalisation

const CONTRACTIONS: Record<string, string> = {
  "i'm": "i am", "i've": "i have", "i'll": "i will", "i'd": "i would", "we're": "we are", "we've": "we have", "we'll": "we will",
  "you're": "you are", "you've": "you have", "she's": "she is", "he's": "he is", "they're": "they are", "they've": "they have",
  "it's": "it is", "that's": "that is", "don't": "do not", "dont": "do not", "doesn't": "does not", "doesnt": "does not",
  "didn't": "did not", "didnt": "did not", "isn't": "is not", "isnt": "is not", "aren't": "are not", "wasn't": "was not",
  "won't": "will not", "wont": "will not", "can't": "cannot", "cant": "cannot", "shouldn't": "should not", "wouldn't": "would not",
  "couldn't": "could not", "haven't": "have not", "hasn't": "has not", "cannot": "cannot",
};

/** A clause boundary between words: punctuation that ends a thought, or a line break. */
const BOUNDARY = "|";

/**
 * The words of a text, lower-cased, accents removed, contractions spelled out, with BOUNDARY
 * between clauses. One pass over the characters.
 */
export function words(text: string): string[] {
  const folded = text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/ß/g, "ss");
  const out: string[] = [];
  let word = "";
  const flush = () => {
    if (!word) return;
    let start = 0;
    let end = word.length;
    while (start < end && word[start] === "'") start++;
    while (end > start && word[end - 1] === "'") end--;
    const trimmed = word.slice(start, end);
    word = "";
    if (!trimmed) return;
    const expanded = CONTRACTIONS[trimmed];
    if (expanded) out.push(...expanded.split(" "));
    else out.push(...trimmed.split("'").filter(Boolean));
  };
  for (const char of folded) {
    if (/[\p{L}\p{N}]/u.test(char)) word += char;
    else if (char === "'" || char === "’" || char === "‘" || char === "`") word += "'";
    else {
      // A full stop inside a date or number ("12.05.", "3.5") ends no clause.
      const inNumber = char === "." && /\p{N}$/u.test(word);
      flush();
      if (!inNumber && ".!?;:,\n()[]".includes(char) && out.length > 0 && out[out.length - 1] !== BOUNDARY) out.push(BOUNDARY);
    }
  }
  flush();
  return out;
}

// ------------------------------------------------------------------ patterns

/** A pattern as slots of alternatives (each a word sequence, possibly empty), matched left to right. */
interface Pattern {
  group: PhraseGroup;
  slots: string[][][];
  /** Must be followed by a clause boundary or the end (`$`). */
  atEnd: boolean;
}

function parse(group: PhraseGroup, pattern: string): Pattern {
  const slots: string[][][] = [];
  let rest = pattern.trim();
  let atEnd = false;
  if (rest.endsWith(" $")) {
    atEnd = true;
    rest = rest.slice(0, -2);
  }
  while (rest.length > 0) {
    if (rest[0] === " ") {
      rest = rest.slice(1);
      continue;
    }
    if (rest[0] === "(") {
      const close = rest.indexOf(")");
      if (close < 0) throw new Error(`unbalanced pattern: ${pattern}`);
      slots.push(rest.slice(1, close).split("|").map((choice) => choice.split(" ").filter(Boolean)));
      rest = rest.slice(close + 1);
    } else {
      const space = rest.search(/[ (]/);
      const word = space < 0 ? rest : rest.slice(0, space);
      slots.push([[word]]);
      rest = space < 0 ? "" : rest.slice(space);
    }
  }
  return { group, slots, atEnd };
}

/** The words a pattern can start with (a leading optional slot lets the next one start it). */
function firstWords(slots: string[][][], from = 0): string[] {
  const slot = slots[from];
  if (!slot) throw new Error("a pattern must contain a word");
  return slot.flatMap((choice) => {
    if (choice.length === 0) return firstWords(slots, from + 1);
    if (choice[0] === "*") throw new Error("a pattern must start with a word");
    return [choice[0]!];
  });
}

let index: Map<string, Pattern[]> | null = null;

/** First word -> the patterns that can start with it, built once per isolate. */
function patterns(): Map<string, Pattern[]> {
  if (index) return index;
  const built = new Map<string, Pattern[]>();
  for (const group of PHRASES) {
    for (const text of group.patterns) {
      const pattern = parse(group, text);
      for (const word of new Set(firstWords(pattern.slots))) built.set(word, [...(built.get(word) ?? []), pattern]);
    }
  }
  index = built;
  return built;
}

/**
 * Where the pattern's slots from `slot` on end when matched from word `at`, or -1. The search
 * branches only over a slot's alternatives (fixed by the pattern, never by the text), so the work
 * per starting word is bounded by the pattern alone.
 */
function matchFrom(tokens: string[], at: number, pattern: Pattern, slot: number): number {
  if (slot === pattern.slots.length) {
    if (!pattern.atEnd) return at;
    const next = tokens[at];
    return next === undefined || next === BOUNDARY ? at : -1;
  }
  for (const choice of pattern.slots[slot]!) {
    let ok = true;
    for (let k = 0; k < choice.length; k++) {
      const token = tokens[at + k];
      if (token === undefined || token === BOUNDARY || (choice[k] !== "*" && choice[k] !== token)) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    const end = matchFrom(tokens, at + choice.length, pattern, slot + 1);
    if (end >= 0) return end;
  }
  return -1;
}

/** A negation among the (up to three) words before i in the same clause. */
function negatedAt(tokens: string[], i: number): boolean {
  for (let k = i - 1; k >= 0 && k >= i - 3; k--) {
    const token = tokens[k]!;
    if (token === BOUNDARY) return false;
    if (NEGATORS.has(token)) return true;
  }
  return false;
}

interface Hit {
  group: PhraseGroup;
  words: string;
}

/** The first hit of each phrase group, in one pass over the words. */
function scan(tokens: string[]): Hit[] {
  const table = patterns();
  const hits = new Map<PhraseGroup, Hit>();
  for (let i = 0; i < tokens.length; i++) {
    const candidates = table.get(tokens[i]!);
    if (!candidates) continue;
    for (const pattern of candidates) {
      if (hits.has(pattern.group)) continue;
      const end = matchFrom(tokens, i, pattern, 0);
      if (end < 0 || (pattern.group.negatable && negatedAt(tokens, i))) continue;
      hits.set(pattern.group, { group: pattern.group, words: tokens.slice(i, end).join(" ") });
    }
  }
  return [...hits.values()];
}

const BARE = new Set(BARE_OPT_OUTS);

/** The reply's first line that is not a greeting, when it is nothing but an opt-out ("Unsubscribe", "STOP."). */
function bareOptOut(text: string): string | null {
  for (const line of text.split("\n")) {
    const lineWords = words(line).filter((w) => w !== BOUNDARY);
    if (lineWords.length === 0) continue;
    if (GREETINGS.has(lineWords[0]!) && lineWords.length <= 4) continue;
    const kept = lineWords.filter((w) => !COURTESIES.has(w)).join(" ");
    return BARE.has(kept) ? kept : null;
  }
  return null;
}

// ------------------------------------------------------------------ the stage

/** The reply's own words, bounded: the stored body (text or HTML) with quoted history and signature removed. */
function ownWords(body: string | null): string {
  if (!body) return "";
  const bounded = body.slice(0, INPUT_LIMIT);
  const isHtml = /<(?:p|div|br|html|body|span|table|blockquote)\b/i.test(bounded.slice(0, 2048));
  return replyText(isHtml ? { text: "", html: bounded } : { text: bounded, html: null }).slice(0, TEXT_LIMIT);
}

/** A stored reply as the out-of-office detector reads a message (no headers: those were read on arrival). */
function asMessage(subject: string, text: string): ParsedMessage {
  return { headers: [], subject, from: null, fromName: null, to: [], cc: [], messageId: null, inReplyTo: null, references: [], date: null, text, html: null, parts: [], enclosedMessages: [], truncated: false };
}

function verdict(kind: RuleKind, name: string, evidence: string, text: string): RuleVerdict {
  return { kind, ruleId: `${kind}.${name}@${RULES_VERSION}`, evidence, text };
}

export function applyRules(input: RuleInput): RuleVerdict {
  const text = ownWords(input.body);
  const subject = (input.subject ?? "").slice(0, SUBJECT_LIMIT);
  const hits = scan(words(text));
  const hit = (rule: PhraseRule, machine = false) =>
    hits.find((h) => h.group.rule === rule && !(machine && h.group.humanOnly) && !(!machine && h.group.machineOnly));
  // The out-of-office detector's own rules (a responder's subject and words of absence); headers
  // are read where the message is (the mailbox reader), and arrive here as `isOoo`.
  const auto = classifyAutoReply(asMessage(subject, text), Date.now());
  const away = hit("ooo");
  const machine = input.isOoo || auto.autoReply || away !== undefined || hit("automated") !== undefined;

  const wrong = hit("wrong_person", machine);
  const dnc = machine ? undefined : hit("dnc");
  const bare = machine ? null : bareOptOut(text);
  if (dnc) return verdict("dnc", dnc.group.name, dnc.words, text);
  if (bare) return verdict("dnc", "bare-opt-out", bare, text);
  if (wrong) return verdict("wrong_person", wrong.group.name, wrong.words, text);
  if (input.isOoo) return verdict("ooo", "flagged", "the reply is flagged out-of-office", text);
  if (auto.outOfOffice) return verdict("ooo", "auto-reply", auto.reason ?? "auto-reply", text);
  if (away) return verdict("ooo", away.group.name, away.words, text);
  const automated = hit("automated");
  if (automated) return verdict("automated", automated.group.name, automated.words, text);
  if (auto.autoReply) return verdict("automated", "auto-reply", auto.reason ?? "auto-reply", text);
  return { kind: null, ruleId: null, evidence: null, text };
}
