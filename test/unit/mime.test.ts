import { describe, expect, it } from "vitest";
import PostalMime from "postal-mime";
import { buildMime, encodeWords, quotedPrintable, rfc5322Date } from "../../src/mail/mime";

const decodeWords = (value: string) =>
  value
    .replace(/\r\n /g, "")
    .replace(/=\?UTF-8\?B\?([^?]*)\?=/g, (_, b64: string) =>
      new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))),
    );
const decodeQp = (text: string) =>
  new TextDecoder().decode(
    Uint8Array.from(
      text.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})|([\s\S])/g, (_, hex: string, char: string) =>
        hex ? String.fromCharCode(parseInt(hex, 16)) : char,
      ),
      (c) => c.charCodeAt(0),
    ),
  );

describe("quotedPrintable", () => {
  it("round-trips UTF-8 with lines of at most 76 characters and CRLF ends", () => {
    const text = `Grüße, ${"ünïcode ".repeat(30)}\nsecond line = two \n.dot\r\nend`;
    const encoded = quotedPrintable(text);
    expect(encoded.split("\r\n").every((line) => line.length <= 76)).toBe(true);
    expect(/^[\x20-\x7e\r\n]*$/.test(encoded)).toBe(true);
    expect(encoded).not.toMatch(/(^|\r\n)\./);
    expect(decodeQp(encoded)).toBe(text.replace(/\r\n/g, "\n").replace(/\n/g, "\r\n"));
  });

  it("encodes trailing whitespace and a dot that lands at a line's start after a soft break", () => {
    expect(quotedPrintable("a \nb\t")).toBe("a=20\r\nb=09");
    const encoded = quotedPrintable(`${"x".repeat(75)}.y`);
    expect(encoded).toBe(`${"x".repeat(75)}=\r\n=2Ey`);
  });
});

describe("encodeWords", () => {
  it("leaves ASCII alone and splits UTF-8 into encoded-words of at most 75 characters", () => {
    expect(encodeWords("Quick question")).toBe("Quick question");
    const subject = `Re: ${"Prüfung ✔ ".repeat(12)}`;
    const encoded = encodeWords(subject);
    expect(encoded.split("\r\n ").every((word) => word.length <= 75)).toBe(true);
    expect(decodeWords(encoded)).toBe(subject);
  });
});

describe("buildMime", () => {
  const base = { from: "a@x.test", to: "b@y.test", subject: "Hi", text: "Hello" };

  it("refuses headers that could inject lines or fight the MIME structure", () => {
    expect(() => buildMime({ ...base, headers: { "X-Evil": "a\r\nBcc: c@z.test" } })).toThrow(TypeError);
    expect(() => buildMime({ ...base, headers: { "Bad Name": "x" } })).toThrow(TypeError);
    expect(() => buildMime({ ...base, headers: { "Content-Type": "text/html" } })).toThrow(TypeError);
    expect(() => buildMime({ ...base, subject: "a\nb" })).toThrow(TypeError);
    expect(() => buildMime({ ...base, to: "b@y.test>\r\nX: y" })).toThrow(TypeError);
  });

  it("writes the caller's headers once and adds Date only when missing", () => {
    const { raw, messageId } = buildMime(
      { ...base, headers: { "Message-ID": "<m1@x.test>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } },
      new Date("2026-03-29T01:30:00Z"),
    );
    expect(messageId).toBe("<m1@x.test>");
    const head = raw.split("\r\n\r\n")[0]!;
    expect(head.match(/^Message-ID: /gm)).toHaveLength(1);
    expect(head).toContain("Date: Sun, 29 Mar 2026 01:30:00 +0000");
    expect(head).toContain("List-Unsubscribe-Post: List-Unsubscribe=One-Click");
    expect(head).toContain("Content-Type: text/plain; charset=UTF-8");
    expect(rfc5322Date(new Date(0))).toBe("Thu, 01 Jan 1970 00:00:00 +0000");
  });
});

describe("buildMime with attachments", () => {
  it("wraps the alternative body and each file in multipart/mixed, which a MIME parser reads back whole", async () => {
    const bytes = new Uint8Array(300).map((_, i) => (i * 7) % 256);
    const { raw } = buildMime({
      from: "sam@salvo.example",
      to: "rita@lead.example",
      subject: "Re: Pricing",
      text: "See attached.",
      html: "<p>See attached.</p>",
      attachments: [
        { filename: "prices.bin", contentType: "application/octet-stream", content: bytes },
        { filename: "Übersicht \"Q3\".txt", contentType: "text/plain", content: new TextEncoder().encode("Zeile 1") },
      ],
    });
    expect(raw).toMatch(/^Content-Type: multipart\/mixed; boundary="/m);
    expect(raw.split("\r\n").every((line) => line.length <= 998)).toBe(true);
    const parsed = await PostalMime.parse(raw);
    expect(parsed.text?.trim()).toBe("See attached.");
    expect(parsed.html).toContain("<p>See attached.</p>");
    expect(parsed.attachments.map((a) => [a.filename, a.mimeType])).toEqual([
      ["prices.bin", "application/octet-stream"],
      ["Übersicht _Q3_.txt", "text/plain"],
    ]);
    expect(new Uint8Array(parsed.attachments[0]!.content as ArrayBuffer)).toEqual(bytes);
  });
});
