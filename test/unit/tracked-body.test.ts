import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/schedule/settings";
import { composeEmail, type ComposeInput } from "../../src/engine/compose";
import { emailLinks } from "../../src/engine/links";
import { loadKeyring } from "../../src/platform/crypto";
import type { TemplateLead } from "../../src/sequences/template";

// A campaign email tracked from its template's shape must be, byte for byte, what the HTML rewriter
// makes of that email's own HTML: the links' `track` called without the body is that rewrite.

const keyring = loadKeyring(`k1:${btoa(String.fromCharCode(...Array.from({ length: 32 }, (_, i) => i + 7)))}`);
const BASE = "https://t.salvo.example";

const words = fc.constantFrom("Hi", "there", "&amp;", "AT&T", "caf\u00e9", "\u{1F680}", "1 < 2");
const variable = fc.constantFrom("{{first_name}}", "{{ company_name | your team }}", "{{first_name|<a href=\"https://fallback.example\">friend</a>}}", "{{City}}", "{{website}}");
const inline = fc.array(fc.oneof({ weight: 3, arbitrary: words }, { weight: 2, arbitrary: variable }, fc.constant("<br>"), fc.constant("%signature%")), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(" "));
const link = fc.oneof(
  fc.tuple(fc.constantFrom("https://acme.example/offer", "https://acme.example/a?b=1&amp;c=2", "mailto:sam@acme.example", `${BASE}/u/keep`, "HTTPS://ACME.example"), inline).map(([href, text]) => `<a href="${href}">${text}</a>`),
  variable.map((name) => `<a href="https://acme.example/${name}">Book</a>`),
  variable.map((name) => `<a href="${name}">Site</a>`),
  fc.constant('<a href="{{website}}">Site</a>'),
);
const block = fc.oneof(
  inline.map((text) => `<p>${text}</p>`),
  fc.tuple(inline, link).map(([text, a]) => `<p>${text} ${a}</p>`),
  inline.map((text) => `<!-- ${text} <a href="https://acme.example/hidden">x</a> -->`),
  variable.map((name) => `<script>var who = "${name}";</script>`),
  variable.map((name) => `<img src="https://acme.example/i.png" alt="${name}">`),
  inline.map((text) => `<table><tr><td>${text}</td></tr></table>`),
);
const htmlBody = fc.tuple(fc.array(block, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([blocks, whole]) => (whole ? `<html><body>${blocks.join("\n")}</body></html>` : blocks.join("\n")));
const textBody = fc.array(fc.oneof(inline, fc.constant("")), { minLength: 1, maxLength: 3 }).map((lines) => lines.join("\n"));
const value = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("Ada", "O'Brien & Sons", "<b>Bold</b>", "https://acme.example", "\u{1F680} x", "a\"b") },
  fc.constantFrom("", " ", "Ada\nLovelace", "Ada\r", "\uE000v0\uE001", "x\uE002"),
  fc.string({ maxLength: 10 }),
);
const website = fc.oneof(fc.constantFrom("https://acme.example/x", "acme.example"), value);
const lead = fc.record({ first_name: value, company_name: value, website, City: value }).map(({ City, ...fields }): TemplateLead & { email: string } => ({
  ...fields,
  email: "ada@example.com",
  custom_fields: { City },
}));

function input(body: string, signature: string | null, who: ComposeInput["lead"], track: ComposeInput["track"], footer: boolean): ComposeInput {
  return {
    recordId: 7,
    step: { seqNumber: 1, subject: "Hello", emailBody: body, variants: [] },
    lead: who,
    sender: { fromName: "Sam", fromEmail: "sam@sender.example", signature, replyTo: null },
    settings: { ...DEFAULT_SETTINGS, unsubscribeText: footer ? "Leave" : "", addUnsubscribeTag: false },
    thread: [],
    messageId: "<abc@sender.example>",
    unsubscribeUrl: `${BASE}/u/token`,
    track,
  };
}

// Counts the rewriter's runs: an email tracked from a shape runs none.
let rewrites = 0;
const scope = globalThis as unknown as { HTMLRewriter: typeof HTMLRewriter };
const Rewriter = scope.HTMLRewriter;
scope.HTMLRewriter = class extends Rewriter {
  constructor() {
    super();
    rewrites += 1;
  }
};

describe("an email tracked from its template's shape", () => {
  it("is the HTML rewriter's output for the email's own HTML, for any body, signature, tracking and values", async () => {
    const links = emailLinks(await keyring, BASE);
    let shaped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(htmlBody, textBody),
        fc.constantFrom(null, '<p>-- Sam <a href="https://sam.example">site</a></p>'),
        fc.array(lead, { minLength: 2, maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (body, signature, leads, trackOpens, trackClicks, footer) => {
          const { track } = await links.forEmail({ recordId: 7, step: 1, mailboxId: 3, sentAt: 1_800_000_000_000, customTrackingDomain: null, trackOpens, trackClicks });
          for (const who of leads) {
            let untracked = "";
            const keep: ComposeInput["track"] = (html, source) => {
              untracked = html;
              return track(html, source);
            };
            const before = rewrites;
            const { message } = await composeEmail(input(body, signature, who, keep, footer));
            if (rewrites === before && (trackOpens || trackClicks)) shaped += 1;
            expect(message.html).toBe(await track(untracked));
          }
        },
      ),
      { numRuns: 300 },
    );
    // Not a vacuous pass: many emails take the shape.
    expect(shaped).toBeGreaterThan(100);
  });
});
