/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { classifyAutoReply } from "../../src/replies/auto-reply";
import { parseMessage } from "../../src/mail/parsed";
import { parseReturnDate } from "../../src/replies/return-date";

// The corpus (test/fixtures/replies/SOURCES.md): ooo/ are out-of-office answers, human/ are people
// writing back, auto/ are other machine answers (bounce-* among them are delivery reports).
const corpus = import.meta.glob<string>("../fixtures/replies/{ooo,human,auto}/*.eml", { query: "?raw", import: "default", eager: true });
const samples = Object.entries(corpus).map(([path, raw]) => {
  const [, folder, name] = /replies\/(\w+)\/(.+)\.eml$/.exec(path)!;
  return { folder: folder!, name: name!, raw };
});

async function classify(raw: string) {
  const message = await parseMessage(raw);
  expect(message.date, "every fixture carries a Date").not.toBeNull();
  return classifyAutoReply(message, message.date!);
}

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

// Return dates the fixtures state; every other out-of-office fixture states none (or a range we do not read).
const RETURNS: Record<string, string> = {
  "sisimai-rfc3834-01": "2005-05-05",
  "exchange-en-until": "2026-03-16",
  "exchange-de-bis": "2026-03-20",
  "exchange-fr-de-retour": "2026-03-03",
  "exchange-es-hasta": "2026-04-15",
  "exchange-it-fino-al": "2026-04-10",
  "exchange-nl-tot-en-met": "2026-03-27",
  "exchange-pt-ate": "2026-05-05",
  "gmail-vacation-en": "2026-05-12",
  "gmail-vacation-de": "2026-04-07",
  "zimbra-vacation-iso": "2026-06-02",
  "zoho-out-of-office": "2026-06-10",
  "yahoo-vacation-us-date": "2026-03-24",
  "sieve-vacation-en-iso": "2026-08-17",
  "sieve-vacation-fr": "2026-08-24",
  "outlook-html-only-returning": "2026-03-03",
  "subject-only-out-of-office": "2026-04-14",
  "gmail-vacation-es": "2026-04-06",
  "precedence-auto-reply-it": "2026-06-02",
  "sieve-vacation-nl": "2026-07-14",
  "auto-submitted-pt": "2026-07-10",
  "exchange-en-quotes-original": "2026-05-04",
  "exchange-de-html-wieder": "2026-04-08",
  "x-autorespond-fr-ooo": "2026-07-27",
};

describe("classifyAutoReply over the fixture corpus", () => {
  it("holds at least 25 out-of-office answers and 25 human replies", () => {
    expect(samples.filter((s) => s.folder === "ooo").length).toBeGreaterThanOrEqual(25);
    expect(samples.filter((s) => s.folder === "human").length).toBeGreaterThanOrEqual(25);
  });

  for (const sample of samples) {
    it(`${sample.folder}/${sample.name}`, async () => {
      const verdict = await classify(sample.raw);
      if (sample.folder === "ooo") {
        expect(verdict).toMatchObject({ autoReply: true, outOfOffice: true });
        expect(verdict.reason).toBeTruthy();
        const returns = RETURNS[sample.name];
        expect(verdict.returnsAt === null ? null : new Date(verdict.returnsAt).toISOString().slice(0, 10)).toBe(returns ?? null);
      } else if (sample.folder === "human") {
        expect(verdict).toEqual({ autoReply: false, outOfOffice: false, reason: null, returnsAt: null });
      } else {
        expect(verdict.outOfOffice).toBe(false);
        expect(verdict.returnsAt).toBeNull();
        // Delivery reports are bounce.ts's business, not auto-replies.
        expect(verdict.autoReply).toBe(!sample.name.startsWith("bounce-"));
      }
    });
  }

  it("reports precision and recall of outOfOffice", async () => {
    let truePositive = 0;
    let falsePositive = 0;
    let falseNegative = 0;
    for (const sample of samples) {
      const { outOfOffice } = await classify(sample.raw);
      const expected = sample.folder === "ooo";
      if (outOfOffice && expected) truePositive++;
      else if (outOfOffice) falsePositive++;
      else if (expected) falseNegative++;
    }
    const precision = truePositive / (truePositive + falsePositive);
    const recall = truePositive / (truePositive + falseNegative);
    console.log(
      `out-of-office over ${samples.length} fixtures: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)} ` +
        `(${truePositive} true, ${falsePositive} false positives, ${falseNegative} missed)`,
    );
    expect(precision).toBe(1);
    expect(recall).toBe(1);
  });
});

const message = (fields: { subject?: string; text?: string; headers?: [string, string][] }) =>
  parseMessage(
    [
      "From: Lead <lead@example.org>",
      "To: dana@outreach.example.com",
      `Subject: ${fields.subject ?? "Re: Quick question"}`,
      "Date: Mon, 2 Mar 2026 09:00:00 +0000",
      ...(fields.headers ?? []).map(([key, value]) => `${key}: ${value}`),
      "Content-Type: text/plain; charset=utf-8",
      "",
      fields.text ?? "Hello",
    ].join("\r\n"),
  );
const MARCH_2 = Date.UTC(2026, 2, 2, 9);

describe("classifyAutoReply rules", () => {
  it("needs machine evidence: the same absence text from a person is a reply", async () => {
    const text = "I am out of the office until 12 March with limited access to email.";
    expect(classifyAutoReply(await message({ text }), MARCH_2).outOfOffice).toBe(false);
    const auto = classifyAutoReply(await message({ text, headers: [["Auto-Submitted", "auto-replied"]] }), MARCH_2);
    expect(auto).toMatchObject({ autoReply: true, outOfOffice: true, returnsAt: day("2026-03-12") });
    expect(auto.reason).toContain("auto-submitted: auto-replied");
  });

  it("takes Auto-Submitted: no as a person, and Precedence: auto_reply alone as an auto-reply but not out-of-office", async () => {
    const no = classifyAutoReply(await message({ text: "I'm on vacation", headers: [["Auto-Submitted", "no"]] }), MARCH_2);
    expect(no.autoReply).toBe(false);
    const precedence = classifyAutoReply(await message({ text: "We got your message.", headers: [["Precedence", "auto_reply"]] }), MARCH_2);
    expect(precedence).toMatchObject({ autoReply: true, outOfOffice: false });
  });

  it("reads the X-Autoreply, X-Autorespond, X-Auto-Response-Suppress and Return-Path: <> markers", async () => {
    for (const marker of [
      ["X-Autoreply", "yes"],
      ["X-Autorespond", "on"],
      ["X-Auto-Response-Suppress", "OOF"],
      ["Return-Path", "<>"],
    ] as [string, string][]) {
      const verdict = classifyAutoReply(await message({ text: "Ich bin im Urlaub.", headers: [marker] }), MARCH_2);
      expect(verdict, marker[0]).toMatchObject({ autoReply: true, outOfOffice: true });
    }
    const exchange = classifyAutoReply(
      await message({ text: "Je suis en congé.", headers: [["X-MS-Exchange-Generated-Message-Source", "Mailbox Rules Agent"]] }),
      MARCH_2,
    );
    expect(exchange).toMatchObject({ autoReply: true, outOfOffice: true });
    const suppressOther = classifyAutoReply(await message({ text: "Ich bin im Urlaub.", headers: [["X-Auto-Response-Suppress", "DR, RN"]] }), MARCH_2);
    expect(suppressOther.autoReply).toBe(false);
  });

  it("takes vacation headers as out-of-office even when the text says little", async () => {
    for (const marker of [
      ["X-Apple-Action", "VACATION"],
      ["Auto-Submitted", "auto-replied (vacation)"],
      ["X-MS-Exchange-Organization-MessageClass", "IPM.Note.Rules.OofTemplate.Microsoft"],
      ["X-MS-Exchange-Message-Class", "IPM.Note.Rules.ExternalOofTemplate.Microsoft"],
      ["X-Kopano-Vacation", "autorespond"],
    ] as [string, string][]) {
      const verdict = classifyAutoReply(await message({ text: "Thanks for your note.", headers: [marker] }), MARCH_2);
      expect(verdict, marker[0]).toMatchObject({ autoReply: true, outOfOffice: true });
    }
    const suppress = classifyAutoReply(
      await message({ text: "Thanks for your note.", headers: [["X-MS-Exchange-Organization-AutoResponseSuppress", "OOF"]] }),
      MARCH_2,
    );
    expect(suppress.outOfOffice).toBe(false);
  });

  it("takes a strong subject marker without headers, in several languages", async () => {
    for (const subject of [
      "Out of Office: Quick question",
      "[Out of office] Re: Quick question",
      "Out of office until 14 April",
      "Abwesenheitsnotiz",
      "Absente jusqu'au 3 mars",
      "Fuera de la oficina",
      "Afwezig",
      "Ausente",
      "Fuori ufficio: Re: Quick question",
    ]) {
      expect(classifyAutoReply(await message({ subject, text: "Thanks." }), MARCH_2).outOfOffice, subject).toBe(true);
    }
    // A person's own subject that merely opens with such words.
    for (const subject of ["On vacation next week?", "Ooo that's great news", "Absence of a budget"]) {
      expect(classifyAutoReply(await message({ subject, text: "I'm on vacation next week." }), MARCH_2).autoReply, subject).toBe(false);
    }
    for (const subject of ["Réponse automatique : Quick question", "Risposta automatica: Quick question", "Automatic reply: Quick question"]) {
      const verdict = classifyAutoReply(await message({ subject, text: "Thanks, we received your message." }), MARCH_2);
      expect(verdict, subject).toMatchObject({ autoReply: true, outOfOffice: false });
    }
    const reReply = classifyAutoReply(await message({ subject: "Re: Automatic reply: Quick question", text: "I am back from vacation." }), MARCH_2);
    expect(reReply.autoReply).toBe(false);
  });

  it("leaves a multipart/report delivery-status message alone even with auto headers", async () => {
    const raw = [
      "From: Mail Delivery System <mailer-daemon@mx.example.org>",
      "To: dana@outreach.example.com",
      "Subject: Out of office",
      "Date: Mon, 2 Mar 2026 09:00:00 +0000",
      "Auto-Submitted: auto-replied",
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "I am out of the office.",
      "--b",
      "Content-Type: message/delivery-status",
      "",
      "Final-Recipient: rfc822; lead@example.org",
      "Action: failed",
      "Status: 5.1.1",
      "--b--",
    ].join("\r\n");
    expect(classifyAutoReply(await parseMessage(raw), MARCH_2)).toEqual({ autoReply: false, outOfOffice: false, reason: null, returnsAt: null });
  });

  it("judges the responder's own words, not the campaign email it quotes", async () => {
    const text = "Thanks for your email, we will get back to you shortly.\n\nOn Mon, 2 Mar 2026, Dana wrote:\n> I'm away on vacation until 9 March, back on 10 March.";
    const verdict = classifyAutoReply(await message({ text, headers: [["Auto-Submitted", "auto-replied"]] }), MARCH_2);
    expect(verdict).toMatchObject({ autoReply: true, outOfOffice: false, returnsAt: null });
  });
});

describe("parseReturnDate", () => {
  const at = (iso: string) => Date.parse(iso);
  const cases: [string, string, string | null][] = [
    ["I will be back on 12 March.", "2026-03-02T09:00:00Z", "2026-03-12"],
    ["I'm returning Monday, March 3.", "2026-02-25T09:00:00Z", "2026-03-03"],
    ["Ich bin bis zum 15.03.2026 nicht erreichbar.", "2026-03-02T09:00:00Z", "2026-03-15"],
    ["Je serai de retour le 3 mars.", "2026-02-20T09:00:00Z", "2026-03-03"],
    ["Je serai de retour le 1er mars.", "2026-02-20T09:00:00Z", "2026-03-01"],
    ["Back on 2026-04-01.", "2026-03-02T09:00:00Z", "2026-04-01"],
    ["Estaré de vuelta el 5 de enero.", "2026-12-20T09:00:00Z", "2027-01-05"],
    ["Sono in ferie fino al 03/04/2026.", "2026-03-20T09:00:00Z", "2026-04-03"],
    ["I am away until 13/03/2026.", "2026-03-02T09:00:00Z", "2026-03-13"],
    ["I am away until 03/13/2026.", "2026-03-02T09:00:00Z", "2026-03-13"],
    ["Ab dem 16.03. bin ich wieder im Büro.", "2026-03-02T09:00:00Z", "2026-03-16"],
    ["Ik ben terug op 7 april.", "2026-03-02T09:00:00Z", "2026-04-07"],
    ["Estarei de volta em 9 de março.", "2026-03-02T09:00:00Z", "2026-03-09"],
    ["I'm away from 3 March and back on 12 March.", "2026-03-01T09:00:00Z", "2026-03-12"],
    ["Ich bin vom 3. März bis 12. März im Urlaub.", "2026-03-01T09:00:00Z", "2026-03-12"],
    // Ambiguous for English (British and American orders differ): unread.
    ["I am away until 03/04/2026.", "2026-03-02T09:00:00Z", null],
    // No word of return next to the date.
    ["I am on holiday from 12 March.", "2026-03-02T09:00:00Z", null],
    ["Ich bin ab dem 3. März im Urlaub.", "2026-03-01T09:00:00Z", null],
    // A stated year in the past is a stale notice.
    ["Back on 12 March 2024.", "2026-03-02T09:00:00Z", null],
    ["Back on 31 February.", "2026-03-02T09:00:00Z", null],
    ["I'll be back soon.", "2026-03-02T09:00:00Z", null],
    ["Available 24/7 until 10.30 tomorrow.", "2026-03-02T09:00:00Z", null],
  ];
  for (const [text, received, expected] of cases) {
    it(`${text} (received ${received.slice(0, 10)})`, () => {
      expect(parseReturnDate(text, at(received))).toBe(expected === null ? null : day(expected));
    });
  }
});
