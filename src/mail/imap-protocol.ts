/**
 * The pure side of our IMAP4rev1 client (RFC 3501): how commands are written (tags, quoted strings,
 * synchronising literals) and how the server's responses are read (status lines, response codes,
 * capabilities, and the nested values of untagged data such as FETCH). No sockets here: src/engine/imap.ts
 * moves the bytes.
 */

/** One server response: its tag (`*` untagged, `+` continuation, or a command's tag) and what follows it. */
export interface ImapResponse {
  tag: string;
  /**
   * The response after the tag and its space, line fragments joined; each literal stays as its `{n}`
   * marker, and its bytes are the next entry of `literals`.
   */
  text: string;
  literals: Uint8Array[];
}

type ImapStatus = "OK" | "NO" | "BAD" | "PREAUTH" | "BYE";

export interface StatusResponse {
  status: ImapStatus;
  /** The response code inside `[...]`, e.g. `AUTHENTICATIONFAILED` or `UIDVALIDITY 3857529045`. */
  code: string | null;
  /** Everything after the status word: what a failure reports, response code included. */
  text: string;
}

/** A value of untagged data: an atom or string, a literal's bytes, NIL, or a parenthesised list. */
export type ImapValue = string | Uint8Array | null | ImapValue[];

/** A piece of a command: text sent as it is (atoms, sequence sets, fetch items), or a literal. */
export type CommandPart = string | { literal: Uint8Array };

const encoder = new TextEncoder();

/** A literal's marker at the end of a line fragment: `{n}`, or `~{n}` for BINARY's literal8. */
const LITERAL_AT_END = /~?\{(\d+)\}$/;

/** The size of the literal announced at the end of a line, or null when the line ends the response. */
export function literalSize(line: string): number | null {
  const size = LITERAL_AT_END.exec(line)?.[1];
  return size === undefined ? null : Number(size);
}

/** Splits a whole response into its tag and text; null when it has no tag at all. */
export function splitTag(text: string, literals: Uint8Array[]): ImapResponse | null {
  const space = text.indexOf(" ");
  if (text === "+") return { tag: "+", text: "", literals };
  if (space <= 0) return null;
  return { tag: text.slice(0, space), text: text.slice(space + 1), literals };
}

const STATUS = /^(OK|NO|BAD|PREAUTH|BYE)(?:\s+(.*))?$/i;

/** The status, response code and text of a status response (`OK [code] text`), or null if it is not one. */
export function parseStatus(text: string): StatusResponse | null {
  const match = STATUS.exec(text);
  if (!match) return null;
  const rest = match[2] ?? "";
  const code = rest.startsWith("[") && rest.includes("]") ? rest.slice(1, rest.indexOf("]")) : null;
  return { status: match[1]!.toUpperCase() as ImapStatus, code, text: rest };
}

/** The capabilities named by a `CAPABILITY ...` response or response code, upper-cased. */
export function capabilitiesOf(text: string): Set<string> | null {
  const match = /^CAPABILITY\s+(.*)$/i.exec(text.trim());
  return match ? new Set(match[1]!.trim().toUpperCase().split(/\s+/)) : null;
}

const ATOM_SAFE = /^[\x21\x23-\x27\x2a-\x5b\x5d-\x7a\x7c\x7e]+$/;

/**
 * A string argument: a quoted string when it is 7-bit text without CR, LF or NUL (quote and backslash
 * escaped), otherwise a literal of its UTF-8 bytes, which carries anything (RFC 3501 4.3).
 */
export function imapString(value: string): CommandPart {
  const quotable = value.length <= 1000 && [...value].every((char) => char > "\0" && char <= "\x7f" && char !== "\r" && char !== "\n");
  if (quotable) return `"${value.replace(/["\\]/g, "\\$&")}"`;
  return { literal: encoder.encode(value) };
}

/** An atom as it is when it may be one (a mailbox name such as INBOX), otherwise as a string. */
export function imapAstring(value: string): CommandPart {
  return ATOM_SAFE.test(value) && value.toUpperCase() !== "NIL" ? value : imapString(value);
}

/** What a command sends, in turns: each segment's text, then (when it has one) a literal after the server's `+`. */
interface CommandSegment {
  text: string;
  literal?: Uint8Array;
}

/** A tagged command as segments: a literal ends its segment's text with `{n}` CRLF; the last segment ends the line. */
export function commandSegments(tag: string, parts: CommandPart[]): CommandSegment[] {
  const segments: CommandSegment[] = [];
  let text = `${tag} `;
  parts.forEach((part, index) => {
    const separator = index === 0 ? "" : " ";
    if (typeof part === "string") {
      text += `${separator}${part}`;
      return;
    }
    segments.push({ text: `${text}${separator}{${part.literal.length}}\r\n`, literal: part.literal });
    text = "";
  });
  segments.push({ text: `${text}\r\n` });
  return segments;
}

/** How a command shows in an error or log: its name and arguments, strings and literals masked. */
export function describeCommand(parts: CommandPart[]): string {
  return parts.map((part) => (typeof part === "string" && !part.startsWith('"') ? part : "***")).join(" ");
}

const LITERAL_HERE = /~?\{(\d+)\}/y;

class ValueReader {
  private at = 0;
  private literal = 0;

  constructor(
    private readonly text: string,
    private readonly literals: Uint8Array[],
  ) {}

  values(close: string | null): ImapValue[] {
    const values: ImapValue[] = [];
    for (;;) {
      while (this.text[this.at] === " ") this.at += 1;
      const char = this.text[this.at];
      if (char === undefined) {
        if (close !== null) throw new Error(`unclosed list in ${JSON.stringify(this.text.slice(0, 200))}`);
        return values;
      }
      if (char === close) {
        this.at += 1;
        return values;
      }
      values.push(this.value());
    }
  }

  private value(): ImapValue {
    const char = this.text[this.at]!;
    if (char === "(") {
      this.at += 1;
      return this.values(")");
    }
    if (char === '"') return this.quoted();
    // Sticky, at the cursor: slicing the rest of the text for each value would be quadratic.
    LITERAL_HERE.lastIndex = this.at;
    const literal = LITERAL_HERE.exec(this.text);
    if (literal) {
      this.at += literal[0].length;
      const bytes = this.literals[this.literal];
      if (!bytes) throw new Error("a literal marker without its bytes");
      this.literal += 1;
      return bytes;
    }
    return this.atom();
  }

  private quoted(): string {
    let value = "";
    for (this.at += 1; this.at < this.text.length; this.at += 1) {
      const char = this.text[this.at]!;
      if (char === "\\") {
        this.at += 1;
        value += this.text[this.at] ?? "";
      } else if (char === '"') {
        this.at += 1;
        return value;
      } else {
        value += char;
      }
    }
    throw new Error(`unterminated quoted string in ${JSON.stringify(this.text.slice(0, 200))}`);
  }

  /** An atom; a `[...]` section inside it (BODY[HEADER.FIELDS (A B)], a response code) is read whole. */
  private atom(): string | null {
    const start = this.at;
    let depth = 0;
    for (; this.at < this.text.length; this.at += 1) {
      const char = this.text[this.at]!;
      if (char === "[") depth += 1;
      else if (char === "]") depth = Math.max(0, depth - 1);
      else if (depth === 0 && (char === " " || char === "(" || char === ")")) break;
    }
    if (this.at === start) throw new Error(`unexpected ${JSON.stringify(this.text[this.at])} in ${JSON.stringify(this.text.slice(0, 200))}`);
    const atom = this.text.slice(start, this.at);
    return atom.toUpperCase() === "NIL" ? null : atom;
  }
}

/**
 * The values of a response's text, e.g. `12 FETCH (UID 40 BODY[] {310})` with its literal gives
 * `["12", "FETCH", ["UID", "40", "BODY[]", Uint8Array(310)]]`. NIL reads as null. Throws on text
 * that is not well formed.
 */
export function parseValues(response: Pick<ImapResponse, "text" | "literals">): ImapValue[] {
  return new ValueReader(response.text, response.literals).values(null);
}

/** What SELECT or EXAMINE says about the mailbox. */
export interface MailboxStatus {
  exists: number;
  uidValidity: number | null;
  uidNext: number | null;
  readOnly: boolean;
}

/** Reads a SELECT/EXAMINE answer: its untagged EXISTS and OK [UIDVALIDITY]/[UIDNEXT], and the tagged code. */
export function mailboxStatus(untagged: ImapResponse[], done: StatusResponse): MailboxStatus {
  const status: MailboxStatus = { exists: 0, uidValidity: null, uidNext: null, readOnly: /^READ-ONLY$/i.test(done.code ?? "") };
  for (const response of untagged) {
    const exists = /^(\d+) EXISTS$/i.exec(response.text);
    if (exists) status.exists = Number(exists[1]);
    const code = parseStatus(response.text)?.code ?? "";
    const [name, value] = code.split(" ");
    if (/^UIDVALIDITY$/i.test(name ?? "") && value) status.uidValidity = Number(value);
    if (/^UIDNEXT$/i.test(name ?? "") && value) status.uidNext = Number(value);
  }
  return status;
}
