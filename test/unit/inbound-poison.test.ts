import { describe, expect, it } from "vitest";
import { parseValues } from "../../src/mail/imap-protocol";
import { parseMessage, unparsedMessage, type ParsedMessage } from "../../src/mail/parsed";
import { PASS_BYTES, withinPassBudget } from "../../src/mail/reader";
import { classifyAutoReply } from "../../src/replies/auto-reply";
import { classifyBounce } from "../../src/replies/bounce";
import { replyText } from "../../src/replies/reply-text";
import { parseReturnDate } from "../../src/replies/return-date";

/**
 * A stranger's email must not stall a mailbox's reading (issue 23): every parser and classifier of
 * inbound mail is linear, or bounded in what it reads. Each poison here took from seconds to hours
 * with the code before (600 KB of blank lines in a bounce: 91 s); now each ends, and the read pass's
 * CPU per message is measured by `npm run bench:poison` (bench/RESULTS.md), not here.
 */

const KB = 1_000;

function message(overrides: Partial<ParsedMessage>): ParsedMessage {
  return {
    headers: [{ key: "from", value: "MAILER-DAEMON@mx.example" }],
    subject: "Undelivered Mail Returned to Sender",
    from: "mailer-daemon@mx.example",
    fromName: null,
    to: ["sam@sender.example"],
    cc: [],
    messageId: "<poison@mx.example>",
    inReplyTo: null,
    references: [],
    date: null,
    text: "",
    html: null,
    parts: [],
    enclosedMessages: [],
    truncated: false,
    ...overrides,
  };
}

// Text bodies built to defeat a backtracking expression: long runs a pattern scans and then gives back.
const TEXT_POISONS: [string, string][] = [
  ["600 KB of blank lines", "\n".repeat(600 * KB)],
  ["600 KB of blank lines with spaces", " \n".repeat(300 * KB)],
  ["600 KB of one word", "a".repeat(600 * KB)],
  ["600 KB of 'delayed' on one line", "delayed ".repeat(75 * KB)],
  ["600 KB of attributions", "On Monday Sam wrote:\n".repeat(30 * KB)],
  ["600 KB of dashes", "-".repeat(600 * KB)],
  ["600 KB of at signs", "a@".repeat(300 * KB)],
  ["600 KB of status codes", "5.1.1.".repeat(100 * KB)],
  ["600 KB of quoted lines", "> x\n".repeat(150 * KB)],
  ["600 KB of dates", "back on 12 March ".repeat(35 * KB)],
];

const HTML_POISONS: [string, string][] = [
  ["116 KB of unclosed links", '<a href="x">'.repeat(116 * KB / 12)],
  ["600 KB of unclosed quote containers", '<div class="x '.repeat(600 * KB / 14)],
  ["600 KB of '<'", "<".repeat(600 * KB)],
  ["600 KB of unclosed scripts", "<script>".repeat(75 * KB)],
  ["600 KB of nested divs", "<div>".repeat(120 * KB)],
];

describe("classifiers over hostile text end, and still answer", () => {
  for (const [name, text] of TEXT_POISONS) {
    it(`bounce, auto-reply, reply text and return date over ${name}`, () => {
      expect(() => classifyBounce(message({ text }))).not.toThrow();
      const human = message({ headers: [], subject: "Re: hello", from: "lead@x.example", text });
      expect(classifyAutoReply(human, Date.UTC(2031, 2, 3)).autoReply).toBe(false);
      expect(replyText(human).length).toBeLessThanOrEqual(text.length);
      expect(() => parseReturnDate(text, Date.UTC(2031, 2, 3))).not.toThrow();
    });
  }
  for (const [name, html] of HTML_POISONS) {
    it(`bounce and reply text over ${name} of HTML`, () => {
      expect(() => classifyBounce(message({ html }))).not.toThrow();
      expect(() => replyText(message({ html, text: "" }))).not.toThrow();
    });
  }

  it("a bounce whose returned copy follows 600 KB of blank lines is still a bounce", () => {
    const text = `This is the mail system at host mx.example.\n\nI'm sorry to have to inform you that your message could not be delivered.\n\n<lead@x.example>: host said: 550 5.1.1 User unknown\n${"\n".repeat(600 * KB)}`;
    expect(classifyBounce(message({ text }))).toMatchObject({ kind: "hard", recipient: "lead@x.example", status: "5.1.1" });
  });
});

describe("parsing hostile raw messages ends, within the parse bounds", () => {
  const head = "From: stranger@x.example\r\nTo: sam@sender.example\r\nSubject: hi\r\nMessage-ID: <p@x.example>\r\n";
  const raws: [string, string][] = [
    ["600 KB of blank lines", `${head}\r\n${"\r\n".repeat(300 * KB)}`],
    ["600 KB of HTML blank lines", `${head}Content-Type: text/html\r\n\r\n${"\n".repeat(600 * KB)}`],
    ["116 KB of unclosed links in HTML", `${head}Content-Type: text/html\r\n\r\n${'<a href="x">'.repeat(116 * KB / 12)}`],
    ["600 KB of headers", `${"X-A: 1\r\n".repeat(75 * KB)}${head}\r\nbody`],
    ["600 KB of encoded words", `Subject: ${"=?UTF-8?B?YWJj?= ".repeat(35 * KB)}\r\nFrom: a@x.example\r\n\r\nbody`],
    ["600 KB of address groups", `To: ${"g:".repeat(300 * KB)}\r\nFrom: a@x.example\r\n\r\nx`],
    ["600 KB of parts", `${head}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n".repeat(15 * KB)}--b--\r\n`],
    ["a 2 MB body", `${head}\r\n${"lorem ipsum dolor sit amet\r\n".repeat(75 * KB)}`],
  ];
  for (const [name, raw] of raws) {
    it(name, async () => {
      const parsed = await parseMessage(new TextEncoder().encode(raw));
      expect(parsed.text.length).toBeLessThanOrEqual(64 * 1024);
      expect((parsed.html ?? "").length).toBeLessThanOrEqual(256 * 1024);
      expect(() => classifyBounce(parsed)).not.toThrow();
      expect(() => classifyAutoReply(parsed, Date.now())).not.toThrow();
      expect(() => replyText(parsed)).not.toThrow();
    });
  }

  it("keeps the headers that thread a reply when the body is cut", async () => {
    const raw = `${head}In-Reply-To: <ours@sender.example>\r\n\r\nYes please.\r\n${"x".repeat(2_000 * KB)}`;
    const parsed = await parseMessage(new TextEncoder().encode(raw));
    expect(parsed).toMatchObject({ inReplyTo: "<ours@sender.example>", truncated: true });
    expect(replyText(parsed).startsWith("Yes please.")).toBe(true);
  });
});

describe("IMAP values over a hostile line", () => {
  it("reads a 1 MiB response of atoms", () => {
    const text = `1 FETCH (${"A ".repeat(512 * 1024)})`;
    expect((parseValues({ text, literals: [] })[2] as unknown[]).length).toBe(512 * 1024);
  });
});

describe("what a read pass takes and keeps", () => {
  it("fetches as many messages as fit in the pass's bytes, each counted at most at its cut, and always one", () => {
    const uids = [1, 2, 3, 4, 5];
    const cut = 256 * 1024;
    expect(withinPassBudget(uids, new Map(uids.map((uid) => [uid, 10 * 1024 * 1024])), cut)).toEqual(uids);
    expect(withinPassBudget(uids, new Map(uids.map((uid) => [uid, PASS_BYTES / 2])), PASS_BYTES)).toEqual([1, 2]);
    expect(withinPassBudget(uids, new Map([[1, 3 * PASS_BYTES]]), 4 * PASS_BYTES)).toEqual([1]);
    expect(withinPassBudget(uids, new Map(), cut)).toEqual(uids);
  });

  it("keeps a message the parser failed on from its header block, so it still threads", () => {
    const raw = new TextEncoder().encode(
      "From: Rita Lead <Rita@Lead.example>\r\nTo: sam@sender.example, Kim <kim@sender.example>\r\nSubject: Re: hello\r\n" +
        "In-Reply-To: <ours@sender.example>\r\nReferences: <a@x> <ours@sender.example>\r\nMessage-ID: <theirs@lead.example>\r\n" +
        "Date: Thu, 02 Apr 2026 09:30:00 +0000\r\n\r\nbody",
    );
    expect(unparsedMessage(raw)).toMatchObject({
      from: "rita@lead.example",
      to: ["sam@sender.example", "kim@sender.example"],
      subject: "Re: hello",
      messageId: "<theirs@lead.example>",
      inReplyTo: "<ours@sender.example>",
      references: ["<a@x>", "<ours@sender.example>"],
      date: Date.parse("2026-04-02T09:30:00Z"),
      text: "",
      unparsed: true,
      truncated: true,
    });
  });
});
