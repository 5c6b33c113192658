import { describe, expect, it } from "vitest";
import {
  capabilitiesOf,
  commandSegments,
  describeCommand,
  imapAstring,
  imapString,
  literalSize,
  mailboxStatus,
  parseStatus,
  parseValues,
  splitTag,
  type ImapResponse,
} from "../../src/mail/imap-protocol";

const bytes = (text: string) => new TextEncoder().encode(text);
const untagged = (text: string, literals: Uint8Array[] = []): ImapResponse => ({ tag: "*", text, literals });

describe("reading responses", () => {
  it("finds the literal a line announces at its end, and only there", () => {
    expect(literalSize("* 1 FETCH (BODY[] {310}")).toBe(310);
    expect(literalSize("* 1 FETCH (BINARY[1] ~{12}")).toBe(12);
    expect(literalSize("* 1 FETCH (BODY[] {0}")).toBe(0);
    expect(literalSize("* OK [UIDVALIDITY 1] {5} is not at the end")).toBeNull();
    expect(literalSize('* 1 FETCH (ENVELOPE ("{5}"))')).toBeNull();
  });

  it("splits the tag off a response; a bare + is a continuation", () => {
    expect(splitTag("A1 OK done", [])).toEqual({ tag: "A1", text: "OK done", literals: [] });
    expect(splitTag("* 3 EXISTS", [])).toEqual({ tag: "*", text: "3 EXISTS", literals: [] });
    expect(splitTag("+ Ready for literal data", [])).toEqual({ tag: "+", text: "Ready for literal data", literals: [] });
    expect(splitTag("+", [])).toEqual({ tag: "+", text: "", literals: [] });
    expect(splitTag("garbage", [])).toBeNull();
    expect(splitTag(" leading space", [])).toBeNull();
  });

  it("reads status responses with and without a response code", () => {
    expect(parseStatus("NO [AUTHENTICATIONFAILED] Authentication failed.")).toEqual({
      status: "NO",
      code: "AUTHENTICATIONFAILED",
      text: "[AUTHENTICATIONFAILED] Authentication failed.",
    });
    expect(parseStatus("OK [UIDVALIDITY 3857529045] UIDs valid")).toMatchObject({ status: "OK", code: "UIDVALIDITY 3857529045" });
    expect(parseStatus("bad Command unrecognized")).toEqual({ status: "BAD", code: null, text: "Command unrecognized" });
    expect(parseStatus("BYE")).toEqual({ status: "BYE", code: null, text: "" });
    expect(parseStatus("PREAUTH [CAPABILITY IMAP4rev1] welcome")).toMatchObject({ status: "PREAUTH", code: "CAPABILITY IMAP4rev1" });
    expect(parseStatus("3 EXISTS")).toBeNull();
    expect(parseStatus("OKAY then")).toBeNull();
  });

  it("reads capabilities from a CAPABILITY response or response code", () => {
    expect(capabilitiesOf("CAPABILITY IMAP4rev1 SASL-IR LITERAL+ STARTTLS AUTH=PLAIN")).toEqual(
      new Set(["IMAP4REV1", "SASL-IR", "LITERAL+", "STARTTLS", "AUTH=PLAIN"]),
    );
    expect(capabilitiesOf("UIDVALIDITY 1")).toBeNull();
  });

  it("parses FETCH data: lists, quoted strings with escapes, NIL, literals and bracketed sections", () => {
    const body = bytes("Subject: hi\r\n\r\nbody");
    const header = bytes("Message-ID: <a@b>\r\n\r\n");
    const values = parseValues(
      untagged(
        '12 FETCH (UID 40 FLAGS (\\Seen \\Answered) ENVELOPE ("Mon, 1 Jan 2024" "say \\"hi\\" \\\\ there" NIL) BODY[HEADER.FIELDS (MESSAGE-ID IN-REPLY-TO)] {21} BODY[]<0> {19})',
        [header, body],
      ),
    );
    expect(values).toEqual([
      "12",
      "FETCH",
      [
        "UID",
        "40",
        "FLAGS",
        ["\\Seen", "\\Answered"],
        "ENVELOPE",
        ["Mon, 1 Jan 2024", 'say "hi" \\ there', null],
        "BODY[HEADER.FIELDS (MESSAGE-ID IN-REPLY-TO)]",
        header,
        "BODY[]<0>",
        body,
      ],
    ]);
  });

  it("refuses malformed data rather than guessing", () => {
    expect(() => parseValues(untagged("1 FETCH (UID 4"))).toThrow(/unclosed list/);
    expect(() => parseValues(untagged('1 FETCH (X "open'))).toThrow(/unterminated quoted string/);
    expect(() => parseValues(untagged("1 FETCH (BODY[] {5})"))).toThrow(/without its bytes/);
    expect(() => parseValues(untagged("1 FETCH )"))).toThrow(/unexpected/);
  });

  it("reads what SELECT says about the mailbox", () => {
    const status = mailboxStatus(
      [
        untagged("FLAGS (\\Answered \\Seen)"),
        untagged("17 EXISTS"),
        untagged("2 RECENT"),
        untagged("OK [UIDVALIDITY 1700000000] UIDs valid"),
        untagged("OK [UIDNEXT 4392] Predicted next UID"),
      ],
      { status: "OK", code: "READ-WRITE", text: "[READ-WRITE] Select completed." },
    );
    expect(status).toEqual({ exists: 17, uidValidity: 1700000000, uidNext: 4392, readOnly: false });
    expect(mailboxStatus([], { status: "OK", code: "READ-ONLY", text: "[READ-ONLY] Examine completed." })).toEqual({
      exists: 0,
      uidValidity: null,
      uidNext: null,
      readOnly: true,
    });
  });
});

describe("writing commands", () => {
  it("quotes 7-bit strings, escaping quote and backslash", () => {
    expect(imapString("ann@example.com")).toBe('"ann@example.com"');
    expect(imapString('pa"ss\\word')).toBe('"pa\\"ss\\\\word"');
    expect(imapString("")).toBe('""');
  });

  it("sends anything a quoted string cannot carry as a literal of its UTF-8 bytes", () => {
    expect(imapString("pässwörd")).toEqual({ literal: bytes("pässwörd") });
    expect(imapString("line\r\nbreak")).toEqual({ literal: bytes("line\r\nbreak") });
    expect(imapString("nul\0")).toEqual({ literal: bytes("nul\0") });
    expect(imapString("x".repeat(1001))).toEqual({ literal: bytes("x".repeat(1001)) });
  });

  it("keeps an atom-safe mailbox name bare, and quotes the rest (NIL included)", () => {
    expect(imapAstring("INBOX")).toBe("INBOX");
    expect(imapAstring("INBOX/Sub.Folder")).toBe("INBOX/Sub.Folder");
    expect(imapAstring("Sent Items")).toBe('"Sent Items"');
    expect(imapAstring("NIL")).toBe('"NIL"');
    expect(imapAstring("a(b)")).toBe('"a(b)"');
  });

  it("splits a command at each literal, announcing its size", () => {
    const password = bytes("pässwörd");
    expect(commandSegments("S2", ["LOGIN", imapString("ann@example.com"), { literal: password }])).toEqual([
      { text: `S2 LOGIN "ann@example.com" {${password.length}}\r\n`, literal: password },
      { text: "\r\n" },
    ]);
    expect(commandSegments("S3", ["SELECT", "INBOX"])).toEqual([{ text: "S3 SELECT INBOX\r\n" }]);
    expect(commandSegments("S4", [{ literal: bytes("a") }, { literal: bytes("bc") }, "X"])).toEqual([
      { text: "S4 {1}\r\n", literal: bytes("a") },
      { text: " {2}\r\n", literal: bytes("bc") },
      { text: " X\r\n" },
    ]);
  });

  it("describes a command without its strings (no password in an error)", () => {
    expect(describeCommand(["LOGIN", imapString("ann@example.com"), imapString("pässwörd")])).toBe("LOGIN *** ***");
    expect(describeCommand(["UID", "FETCH", "1:*", "(UID FLAGS)"])).toBe("UID FETCH 1:* (UID FLAGS)");
  });
});
