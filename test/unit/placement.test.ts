import { describe, expect, it } from "vitest";
import { arrivalOf, authenticationOf, cellDeadline, foldersToRead, placementOf, senderHopOf, tokensIn } from "../../src/deliverability/placement";
import { verdictOf } from "../../src/deliverability/spam-filter";
import { linksOf } from "../../src/deliverability/link-checker";
import { parseHeaderBlock } from "../../src/mail/parsed";

const gmailSeed = { inboxFolders: ["INBOX"], tabFolders: ["[Gmail]/Promotions", "[Gmail]/Social"], spamFolders: ["[Gmail]/Spam"] };

describe("folder mapping", () => {
  it("maps each of the seed's folders to its placement, INBOX in any case, others as written", () => {
    expect(placementOf("INBOX", gmailSeed)).toBe("inbox");
    expect(placementOf("Inbox", gmailSeed)).toBe("inbox");
    expect(placementOf("[Gmail]/Social", gmailSeed)).toBe("tab");
    expect(placementOf("[Gmail]/Spam", gmailSeed)).toBe("spam");
    expect(placementOf("[gmail]/spam", gmailSeed)).toBeNull();
    expect(placementOf("Archive", gmailSeed)).toBeNull();
  });

  it("lets spam win over tab over inbox for a folder listed twice, and reads each folder once", () => {
    const odd = { inboxFolders: ["INBOX", "Junk"], tabFolders: ["Junk", "Offers"], spamFolders: ["Junk"] };
    expect(placementOf("Junk", odd)).toBe("spam");
    expect(foldersToRead(odd)).toEqual(["Junk", "Offers", "INBOX"]);
    expect(foldersToRead({ inboxFolders: ["inbox"], tabFolders: [], spamFolders: ["INBOX"] })).toEqual(["INBOX"]);
  });
});

describe("the seed copy's headers", () => {
  const raw = [
    "Received: from mx.seed.example (mx.seed.example [10.0.0.9]) by store.seed.example; Mon, 23 Nov 2026 05:10:02 +0000",
    "Authentication-Results: mx.seed.example; spf=softfail smtp.mailfrom=sender.example;",
    "  dkim=fail header.d=other.example; dkim=pass header.d=sender.example; dmarc=pass (p=none) header.from=sender.example",
    "Authentication-Results: relay.example; spf=pass; dmarc=fail",
    "Received: from out.sender.example (mail-out.sender.example [203.0.113.7])",
    "  by mx.seed.example with ESMTPS id abc; Mon, 23 Nov 2026 05:10:00 +0000",
    "Received: from [192.168.1.20] (helo=laptop) by out.sender.example; Mon, 23 Nov 2026 05:09:59 +0000",
    "Subject: hi",
    "",
    "body",
  ].join("\r\n");
  const headers = parseHeaderBlock(raw);

  it("reads SPF, DKIM and DMARC from the newest Authentication-Results, DKIM passing when any signature passed", () => {
    expect(authenticationOf(headers)).toEqual({ spf: "softfail", dkim: "pass", dmarc: "pass" });
    expect(authenticationOf(parseHeaderBlock("Authentication-Results: mx; dkim=none\r\n\r\n"))).toEqual({ spf: null, dkim: "none", dmarc: null });
    expect(authenticationOf([])).toEqual({ spf: null, dkim: null, dmarc: null });
  });

  it("takes the sender's IP and host from the oldest hop with a public address, the reverse name when given", () => {
    expect(senderHopOf(headers)).toEqual({ ip: "203.0.113.7", host: "mail-out.sender.example" });
    const privateOnly = parseHeaderBlock("Received: from [192.168.1.20] (helo=laptop) by out.sender.example; Mon, 23 Nov 2026 05:09:59 +0000\r\n\r\n");
    expect(senderHopOf(privateOnly)).toEqual({ ip: "192.168.1.20", host: null });
    expect(senderHopOf(parseHeaderBlock("Received: from localhost (localhost [127.0.0.1]) by mail.lab.salvo.test\r\n\r\n"))).toEqual({ ip: "127.0.0.1", host: "localhost" });
    expect(senderHopOf([])).toEqual({ ip: null, host: null });
  });

  it("dates the arrival by the newest Received header", () => {
    expect(arrivalOf(headers)).toBe(Date.parse("2026-11-23T05:10:02Z"));
    expect(arrivalOf(parseHeaderBlock("Received: from x by y\r\n\r\n"))).toBeNull();
  });
});

describe("tokens and deadlines", () => {
  it("finds only live tokens, across a quoted-printable soft break and in any case", () => {
    const token = "3f2b8c1e-9a7d-4e21-b5c3-0d4e6f8a9b10";
    const other = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    expect(tokensIn(`Hello\nref 3F2B8C1E-9A7D-4E21-B5C3-=\r\n0D4E6F8A9B10 thanks`, [token, other])).toEqual([token]);
    expect(tokensIn("nothing here", [token])).toEqual([]);
  });

  it("gives a cell until its send time (or the run's start) plus the deadline minutes", () => {
    const start = Date.parse("2026-11-23T05:00:00Z");
    expect(cellDeadline(null, start, 60)).toBe(Date.parse("2026-11-23T06:00:00Z"));
    expect(cellDeadline(start + 20 * 60_000, start, 60)).toBe(Date.parse("2026-11-23T06:20:00Z"));
  });
});

describe("spam filter answers and links", () => {
  it("reduces Rspamd's /checkv2 answer, symbols highest score first", () => {
    const answer = {
      is_skipped: false,
      score: 6.2,
      required_score: 15,
      action: "add header",
      symbols: {
        MIME_TRACE: { name: "MIME_TRACE", score: 0, metric_score: 0 },
        R_SUSPICIOUS_URL: { name: "R_SUSPICIOUS_URL", score: 5.5, description: "Obfuscated URL found" },
        DATE_IN_PAST: { name: "DATE_IN_PAST", score: 0.7, description: "" },
      },
    };
    expect(verdictOf(answer)).toEqual({
      score: 6.2,
      required: 15,
      action: "add header",
      symbols: [
        { name: "R_SUSPICIOUS_URL", score: 5.5, description: "Obfuscated URL found" },
        { name: "DATE_IN_PAST", score: 0.7 },
        { name: "MIME_TRACE", score: 0 },
      ],
    });
    expect(() => verdictOf({ error: "bad" })).toThrow(/no score/);
  });

  it("collects each http(s) link once from the HTML and the text", () => {
    const html = `<a href="https://a.example/x?y=1&amp;z=2">x</a> <a href='http://b.example'>b</a> <a href=mailto:me@x.example>m</a>`;
    const text = "See https://a.example/x?y=1&z=2, and https://c.example/path. Also ftp://no.example";
    expect(linksOf(html, text)).toEqual(["https://a.example/x?y=1&z=2", "http://b.example/", "https://c.example/path"]);
  });
});
