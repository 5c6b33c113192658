/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { classifyBounce, type Bounce } from "../../src/replies/bounce";
import { parseMessage } from "../../src/mail/parsed";

// The corpus is read at build time: the Workers runtime has no file system. Sources and licences:
// test/fixtures/replies/SOURCES-bounces.md.
const bounces = import.meta.glob<string>("../fixtures/replies/bounces/*.eml", { query: "?raw", import: "default", eager: true });
const negatives = import.meta.glob<string>("../fixtures/replies/bounces-negative/*.eml", { query: "?raw", import: "default", eager: true });

type Expected = Pick<Bounce, "kind" | "recipient" | "originalMessageId"> | null;

/**
 * What each message is, judged by reading it: null is not a bounce (delay warnings, a delivered
 * report, human replies and forwards). Hard and soft follow the rules of src/replies/bounce.ts
 * (status class, with a full mailbox soft). The sisimai test suite's parsed status and reason of each
 * sisimai file agree with every kind here but one: sisimai-sendgrid-03 is soft here (its report has
 * an empty Status, Action: expired after connection timeouts), sisimai reads 5.0.947.
 */
const EXPECTED: Record<string, Expected> = {
  "handwritten-exchange-ndr-html-only.eml": { kind: "hard", recipient: "bob.gone@contoso.example", originalMessageId: "<3b9d0f62-77aa-4c1e-9e0f-salvo@sender.example.com>" },
  "handwritten-gmail-address-not-found.eml": { kind: "hard", recipient: "no.such.person@gmail.com", originalMessageId: "<8f1c2d3e-0001-4a5b-9c8d-salvo@sender.example.com>" },
  "handwritten-human-forward-of-bounce.eml": null,
  "handwritten-human-reply-quoting-undeliverable.eml": null,
  "sisimai-dragonfly-01.eml": { kind: "hard", recipient: "pseudo-local-part@google.example.com", originalMessageId: "<66681288.e06d1.3824794@df.example.jp>" },
  "sisimai-exchange2003-04.eml": { kind: "hard", recipient: "kijitora@example.com", originalMessageId: null },
  "sisimai-exchange2003-05.eml": { kind: "hard", recipient: "kijitora@example.com", originalMessageId: "<0000000000000000000000000000000@example.com>" },
  "sisimai-exchange2007-01.eml": { kind: "hard", recipient: "mikeneko@example.co.jp", originalMessageId: null },
  "sisimai-exchange2007-06.eml": { kind: "hard", recipient: "transports@agglo-saumur.fr", originalMessageId: "<1513177790.ha3dsljxgizc2mjrgq2dkobx@mb.newsletter-autos.fr>" },
  "sisimai-exchange2007-07.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<QCw92c-juIk7Y-w6@neko.example.com>" },
  "sisimai-exim-01.eml": { kind: "hard", recipient: "kijitora@example.ed.jp", originalMessageId: "<E1P1ce6-000Egt-GZ@e1.example.org>" },
  "sisimai-exim-02.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<E1X58pB-0004bW-2s@marutamachi.example.org>" },
  "sisimai-exim-05.eml": { kind: "hard", recipient: "kijitora@neko.example.co.jp", originalMessageId: "<19990429233445.000000@mx4.example.org>" },
  "sisimai-exim-07.eml": { kind: "soft", recipient: "shiba@example.com", originalMessageId: null },
  "sisimai-exim-29.eml": { kind: "hard", recipient: "kijitora@example.co.jp", originalMessageId: "<EEEEEEE-222222-00@example.co.jp>" },
  "sisimai-exim-31.eml": { kind: "hard", recipient: "kijitora@example.net", originalMessageId: "<neko222-nyaaan-22@neko.example.com>" },
  "sisimai-exim-38.eml": null,
  "sisimai-exim-60.eml": { kind: "soft", recipient: "nyaan%gol.com@q002.kijitora.gol.com", originalMessageId: "<20180429233445.A00000000222@neko.example.jp>" },
  "sisimai-gmail-01.eml": { kind: "hard", recipient: "userunknown@example.jp", originalMessageId: "<D992C2C3-F175-4C4D-97E2-53A90E4E5BF5@gmail.com>" },
  "sisimai-gmail-03.eml": { kind: "hard", recipient: "kijitora@example.co.jp", originalMessageId: "<CBA48452-0888-4AAC-AA4E-0F54D382117F@gmail.com>" },
  "sisimai-gmail-06.eml": null,
  "sisimai-gmail-16.eml": { kind: "soft", recipient: "mailboxfull@bouncehammer.jp", originalMessageId: "<CAByYQsGrtAMtMPpgjc+VGGj=QWruPrLuUsee_4=ahWTY2KCBcg@mail.google.example.com>" },
  "sisimai-gmail-18.eml": { kind: "hard", recipient: "kijitora@example.or.jp", originalMessageId: "<FFFFFFFF-2222-0000-0000-EEEEEEEE0000@gmail.com>" },
  "sisimai-gmail-19.eml": { kind: "soft", recipient: "neko-nyaan@google.example.com", originalMessageId: "<20170429233445.9C8036C2E7D8@mail.example.com>" },
  "sisimai-mcafee-01.eml": { kind: "hard", recipient: "kijitora@example.co.jp", originalMessageId: "<000000000000000000000.shironeko@example.jp>" },
  "sisimai-office365-02.eml": { kind: "hard", recipient: "kijitora@example.onmicrosoft.com", originalMessageId: "<c302b7e8-9b97-40ef-90eb-313cc6c25133@NYAAAAN.example.org>" },
  "sisimai-office365-04.eml": { kind: "hard", recipient: "otsu-sakaba-hunter-neko-nyaaaaaaan@ezweb.ne.jp", originalMessageId: "<SLXP216MB0381A8F03A83505296890D11A9950@SLXP216MB0381.KORP216.PROD.OUTLOOK.COM>" },
  "sisimai-office365-12.eml": { kind: "soft", recipient: "kijitora@cr.neko.nyaan.jp", originalMessageId: "<SLXP216MB03814587D983866DA15F34A9A9250@SLXP216MB0381.KORP216.PROD.OUTLOOK.COM>" },
  "sisimai-opensmtpd-04.eml": null,
  "sisimai-outlook-02.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<BLU436-SMTP6688F46CFBFB4294F252B1BA770@phx.gbl>" },
  "sisimai-outlook-06.eml": null,
  "sisimai-outlook-07.eml": { kind: "soft", recipient: "kijitora@example.com", originalMessageId: "<BAY182-W4180385B0DABF89EB94B34A9300@phx.gbl>" },
  "sisimai-postfix-01.eml": { kind: "hard", recipient: "kijitora@example.org", originalMessageId: null },
  "sisimai-postfix-02.eml": { kind: "hard", recipient: "filtered@example.co.jp", originalMessageId: null },
  "sisimai-postfix-03.eml": { kind: "hard", recipient: "kijitora@example.net", originalMessageId: "<20140701000000.000000000000@e1.example.ne.jp>" },
  "sisimai-postfix-04.eml": { kind: "hard", recipient: "kijitora@example.co.jp", originalMessageId: "<A8F82EDD-E518-4F5C-8C70-BC4EFF24AB9F@example.ne.jp>" },
  "sisimai-postfix-05.eml": { kind: "soft", recipient: "kijitora@example.org", originalMessageId: "<FFFFFFFF.0000000@example.co.jp>" },
  "sisimai-postfix-07.eml": { kind: "hard", recipient: "kijitora@user.example.or.jp", originalMessageId: "<8EF96F3F-377B-4E4D-9F3C-54EE1924B2BA@mirror.example.ne.jp>" },
  "sisimai-postfix-13.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<20150213024748.CEEDB20C16@2jo.example.jp>" },
  "sisimai-postfix-15.eml": { kind: "soft", recipient: "kijitora@bukkoji.example.org", originalMessageId: "<20150213031231.54EF320C12@kawaramachi.example.jp>" },
  "sisimai-postfix-16.eml": { kind: "hard", recipient: "kijitora@example.go.jp", originalMessageId: "<0000000000000.FFFFFF000000@mx0.example.jp>" },
  "sisimai-qmail-02.eml": { kind: "hard", recipient: "userunknown@example.jp", originalMessageId: null },
  "sisimai-qmail-03.eml": { kind: "hard", recipient: "kijitora@example.org", originalMessageId: "<00000000000000.5529.qmail@nijo.example.jp>" },
  "sisimai-qmail-06.eml": { kind: "soft", recipient: "kijitora@example.jp", originalMessageId: "<57D03121-12F7-4801-B30F-9E44B15E56DC@example.co.jp>" },
  "sisimai-qmail-07.eml": { kind: "soft", recipient: "kijitora@example.jp", originalMessageId: null },
  "sisimai-qmail-16.eml": { kind: "hard", recipient: "userunknown@libsisimai.net", originalMessageId: "<20240624090001.44587.qmail@nq.example.jp>" },
  "sisimai-qmail-17.eml": { kind: "hard", recipient: "userunknown@libsisimai.net", originalMessageId: "<20240624090401.44656.qmail@nq.example.jp>" },
  "sisimai-qmail-21.eml": { kind: "hard", recipient: "libgsasl7-dev@email.example.jp", originalMessageId: "<20240626061325.41784.indimail@idhost>" },
  "sisimai-qmail-24.eml": { kind: "soft", recipient: "mailboxfull@libsisimai.net", originalMessageId: "<20240626062858.76875.qmail@email.example.jp>" },
  "sisimai-rfc3464-07.eml": null,
  "sisimai-rfc3464-09.eml": null,
  "sisimai-rfc3464-10.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<c15e793e1c6acf9fbc39d1547bbd98b4@example.com>" },
  "sisimai-rfc3464-26.eml": { kind: "hard", recipient: "kijitora@example.or.jp", originalMessageId: "<ALSMTP02OCIIZS2TRqf0001e76b@example.net>" },
  "sisimai-rfc3464-28.eml": null,
  "sisimai-rfc3464-37.eml": { kind: "hard", recipient: "kijitora@neko.nyaan.example.com", originalMessageId: "<ffffffffffff000000002222000000000@e3.example.com>" },
  "sisimai-rfc3464-52.eml": { kind: "soft", recipient: "neko@libsisimai.org", originalMessageId: "<CAByYQsEVA+zJMnugH3M98xXcDj5XHp8HYsGtb5_r9Jd8LuyF=Q@mail.gmail.example.com>" },
  "sisimai-rfc3464-55.eml": null,
  "sisimai-rfc3464-57.eml": { kind: "hard", recipient: "otsu-sakaba-hunter-neko-nyaaaaaaan@ezweb.ne.jp", originalMessageId: "<CAByYQsGNYchW5-rGA6r51tLL-hiL6V-y_KsgPd4LNDvjPWuQww@mail.gmail.com>" },
  "sisimai-rfc3464-63.eml": { kind: "hard", recipient: "libsisimai-2@googlegroups.com", originalMessageId: "<144493c0-8548-4b2b-987f-ae719df82545@Spark>" },
  "sisimai-sendgrid-03.eml": { kind: "soft", recipient: "kijitora@example.org", originalMessageId: "<1373048289.4959893235684211@mf36.sendgrid.net>" },
  "sisimai-sendmail-01.eml": { kind: "hard", recipient: "userunknown@bouncehammer.jp", originalMessageId: "<E1C50F1B-1C83-4820-BC36-AC6FBFBE8568@example.org>" },
  "sisimai-sendmail-05.eml": { kind: "hard", recipient: "kijitora@example.org", originalMessageId: "<000000B2-9997-8888-8999-000000000356@example.co.jp>" },
  "sisimai-sendmail-07.eml": { kind: "hard", recipient: "kijitora@example.org", originalMessageId: "<FB1BB909-76BD-490F-8A86-98F3B89D92BF@example.ne.jp>" },
  "sisimai-sendmail-08.eml": { kind: "soft", recipient: "neko@example.org", originalMessageId: "<0000000000000000000000000000@example.co.jp>" },
  "sisimai-sendmail-09.eml": { kind: "hard", recipient: "kijitora@example.co.jp", originalMessageId: "<000000000000yyyy.999909@example.jp>" },
  "sisimai-surfcontrol-01.eml": { kind: "hard", recipient: "kijitora@example.com", originalMessageId: "<20100429233445.00000000000@mx4.example.co.jp>" },
  "sisimai-yahoo-01.eml": { kind: "hard", recipient: "kijitora@example.org", originalMessageId: "<6AE6249A-E7A8-4980-862C-F499F6B8E7C5@y.example.co.jp>" },
  "sisimai-yahoo-02.eml": { kind: "soft", recipient: "kijitora@example.ed.jp", originalMessageId: "<3C1693EF-7886-4E59-BBF9-D3DF3B74820F@y.example.co.jp>" },
  "sisimai-yahoo-03.eml": { kind: "hard", recipient: "kijitora@example.jp", originalMessageId: "<4480863.3669135.1417873350756.JavaMail.yahoo@jws10091.mail.ne1.yahoo.com>" },
  "sisimai-yahoo-07.eml": { kind: "hard", recipient: "otsu-sakaba-hunter-neko-nyaaaaaaan@ezweb.ne.jp", originalMessageId: "<D36444F0-C76F-43F3-9E73-85D657DE6176@yahoo.com>" },
  "sisimai-yahoo-10.eml": { kind: "hard", recipient: "userunknown@cubicroot.jp", originalMessageId: "<B96398F2-F84C-40B0-95A6-DE91474072E4@yahoo.com>" },
};

const name = (path: string) => path.slice(path.lastIndexOf("/") + 1);
const corpus = [
  ...Object.entries(bounces).map(([path, raw]) => ({ file: name(path), raw, expected: EXPECTED[name(path)] })),
  ...Object.entries(negatives).map(([path, raw]) => ({ file: name(path), raw, expected: null as Expected })),
];

describe("classifyBounce over the fixture corpus", () => {
  it("has an expectation for every bounce fixture, and at least 25 bounces", () => {
    expect(Object.keys(bounces).map(name).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(corpus.filter((c) => c.expected !== null).length).toBeGreaterThanOrEqual(25);
  });

  it.each(corpus.map((c) => [c.file, c] as const))("%s", async (_, { raw, expected }) => {
    const result = classifyBounce(await parseMessage(raw));
    if (expected === null) expect(result).toBeNull();
    else expect(result && { kind: result.kind, recipient: result.recipient, originalMessageId: result.originalMessageId }).toEqual(expected);
  });

  it("reports precision and recall of 'is a bounce' and accuracy of hard/soft", async () => {
    let truePositive = 0;
    let falsePositive = 0;
    let falseNegative = 0;
    let kindRight = 0;
    for (const { raw, expected } of corpus) {
      const result = classifyBounce(await parseMessage(raw));
      if (result && expected) {
        truePositive += 1;
        if (result.kind === expected.kind) kindRight += 1;
      } else if (result) falsePositive += 1;
      else if (expected) falseNegative += 1;
    }
    const precision = truePositive / (truePositive + falsePositive);
    const recall = truePositive / (truePositive + falseNegative);
    const accuracy = kindRight / truePositive;
    const bounceCount = corpus.filter((c) => c.expected).length;
    console.log(
      `bounce corpus: ${corpus.length} messages, ${bounceCount} bounces; precision ${(precision * 100).toFixed(1)}%, ` +
        `recall ${(recall * 100).toFixed(1)}%, hard/soft accuracy ${(accuracy * 100).toFixed(1)}% (${kindRight}/${truePositive})`,
    );
    expect(precision).toBe(1);
    expect(recall).toBe(1);
    expect(accuracy).toBe(1);
  });
});

describe("parseMessage and a returned message inside a bounce without a delivery report", () => {
  const raw = bounces["../fixtures/replies/bounces/sisimai-postfix-07.eml"] ?? "";

  it("keeps the returned message's headers, which postal-mime leaves out of the rendered body", async () => {
    const parsed = await parseMessage(raw);
    expect(parsed.enclosedMessages).toHaveLength(1);
    expect(parsed.enclosedMessages[0]!.headers).toContainEqual({ key: "message-id", value: "<8EF96F3F-377B-4E4D-9F3C-54EE1924B2BA@mirror.example.ne.jp>" });
    expect(parsed.text).not.toContain("8EF96F3F-377B-4E4D-9F3C-54EE1924B2BA");
  });

  it("still renders the returned message into the body, as before", async () => {
    const parsed = await parseMessage(raw);
    expect(parsed.text).toContain("Nyaaaa");
    expect(parsed.parts.map((p) => p.mimeType)).not.toContain("message/rfc822");
  });

  it("lists the returned message of a delivery report both as a part and with its headers", async () => {
    const parsed = await parseMessage(bounces["../fixtures/replies/bounces/sisimai-postfix-04.eml"] ?? "");
    expect(parsed.parts.map((p) => p.mimeType)).toEqual(["message/delivery-status", "message/rfc822"]);
    expect(parsed.enclosedMessages[0]!.headers.find((h) => h.key === "message-id")?.value).toBe("<A8F82EDD-E518-4F5C-8C70-BC4EFF24AB9F@example.ne.jp>");
  });
});

describe("classifyBounce on a notice the corpus does not cover", () => {
  it("takes a sender named MAILER-DAEMON with an empty address for a mail delivery agent", async () => {
    const raw = [
      "From: MAILER-DAEMON <>",
      "To: ann@sender.example.com",
      "Subject: Mail delivery failed",
      "Message-ID: <notice-1@mta.example.net>",
      "",
      "<lead@example.org>: 550 5.1.1 mailbox unavailable",
      "",
      "Message-ID: <campaign-1@sender.example.com>",
      "",
    ].join("\r\n");
    expect(classifyBounce(await parseMessage(raw))).toMatchObject({ kind: "hard", recipient: "lead@example.org", status: "5.1.1" });
  });
});
