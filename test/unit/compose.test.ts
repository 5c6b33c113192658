import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/schedule/settings";
import { composeEmail, type ComposeInput } from "../../src/engine/compose";
import { htmlToText } from "../../src/mail/html-text";
import { buildMime } from "../../src/mail/mime";

function input(overrides: Partial<ComposeInput> = {}): ComposeInput {
  return {
    recordId: 7,
    step: { seqNumber: 1, subject: "Hello {{first_name}}", emailBody: "<p>Hi {{first_name}}</p>%signature%", variants: [] },
    lead: { email: "ada@example.com", first_name: "Ada <script>", last_name: "Lovelace" },
    sender: { fromName: "Sam", fromEmail: "sam@sender.example", signature: "<p>-- Sam</p>", replyTo: null },
    settings: DEFAULT_SETTINGS,
    thread: [],
    messageId: "<abc@sender.example>",
    unsubscribeUrl: "https://t.example/u/tok",
    track: (html) => Promise.resolve(`${html}<img src="pixel">`),
    ...overrides,
  };
}

describe("composeEmail", () => {
  it("renders fields (escaped in HTML), the signature, tracking, and the one-click headers", async () => {
    const { message, subject, body } = await composeEmail(input());
    expect(subject).toBe("Hello Ada <script>");
    expect(body).toBe("<p>Hi Ada &lt;script&gt;</p><p>-- Sam</p>");
    expect(message.html).toBe(`${body}<img src="pixel">`);
    expect(message.text).toBe("Hi Ada <script>\n\n-- Sam");
    expect(message.headers).toMatchObject({
      "Message-ID": "<abc@sender.example>",
      "List-Unsubscribe": "<https://t.example/u/tok>",
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    });
    expect(message.headers).not.toHaveProperty("In-Reply-To");
  });

  it("threads a follow-up without a subject on the first email", async () => {
    const thread = [
      { messageId: "<one@x>", subject: "Hello Ada" },
      { messageId: "<two@x>", subject: "Re: Hello Ada" },
    ];
    const { message, subject } = await composeEmail(input({ step: { seqNumber: 3, subject: "", emailBody: "Again", variants: [] }, thread }));
    expect(subject).toBe("Re: Hello Ada");
    expect(message.headers).toMatchObject({ "In-Reply-To": "<two@x>", References: "<one@x> <two@x>" });
  });

  it("sends text only when the campaign says so, with the unsubscribe footer in both forms", async () => {
    const settings = { ...DEFAULT_SETTINGS, sendAsPlainText: true, unsubscribeText: "Opt out" };
    const { message } = await composeEmail(input({ settings }));
    expect(message.html).toBeUndefined();
    expect(message.text).toContain("Opt out: https://t.example/u/tok");
    const html = await composeEmail(input({ settings: { ...DEFAULT_SETTINGS, addUnsubscribeTag: true } }));
    expect(html.message.html).toContain('<a href="https://t.example/u/tok">Unsubscribe</a>');
  });

  it("turns a body without markup into HTML line by line, the signature still HTML", async () => {
    const step = { seqNumber: 1, subject: "s", emailBody: "Line one & two\nLine {{first_name}}\n%signature%", variants: [] };
    const { body } = await composeEmail(input({ step }));
    expect(body).toBe("Line one &amp; two<br>\nLine Ada &lt;script&gt;<br>\n<p>-- Sam</p>");
  });

  it("gives a record the same variant and spin every time, and different records both variants", async () => {
    const step = {
      seqNumber: 1,
      subject: "base",
      emailBody: null,
      variants: [
        { id: 1, subject: "{A|B} one", emailBody: "x", percentage: 50 },
        { id: 2, subject: "two", emailBody: "y", percentage: 50 },
      ],
    };
    const first = await composeEmail(input({ step }));
    const again = await composeEmail(input({ step }));
    expect([again.variantId, again.subject]).toEqual([first.variantId, first.subject]);
    const seen = new Set<number | null>();
    for (let recordId = 1; recordId <= 40; recordId += 1) seen.add((await composeEmail(input({ step, recordId }))).variantId);
    expect(seen).toEqual(new Set([1, 2]));
  });

  it("builds a MIME message the SMTP layer accepts, even with a line break in a lead's name", async () => {
    const { message } = await composeEmail(input({ lead: { email: "ada@example.com", first_name: "Ada\r\nBcc: x@evil.example" } }));
    const { raw } = buildMime(message);
    const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
    expect(head).not.toMatch(/^Bcc:/m);
    expect(head).toContain(`To: "Ada Bcc: x@evil.example" <ada@example.com>`);
  });
});

describe("htmlToText", () => {
  it("keeps paragraphs, line breaks, list items and link addresses", () => {
    expect(htmlToText('<p>Hi&nbsp;there</p><p>See <a href="https://x.example/a?b=1&amp;c=2">this</a><br>ok</p><ul><li>one</li></ul>')).toBe(
      // A non-breaking space stays one (our own converter made it a space).
      "Hi\u00a0there\n\nSee this (https://x.example/a?b=1&c=2)\nok\n\n- one",
    );
  });
});
