import { describe, expect, it } from "vitest";
import { classifyAutoReply } from "../../src/replies/auto-reply";
import { parseMessage } from "../../src/mail/parsed";
import { replyText } from "../../src/replies/reply-text";
import { applyRules } from "../../src/triage/rules";

/**
 * The labelled corpus (test/fixtures/triage/SOURCES.md) through the rules stage, as replies are
 * stored: pushed text as given, mailbox messages as the reader stores them (own words, is_ooo from
 * the headers). The figures themselves are `npm run bench:triage`'s; this holds the lines the rules
 * must never cross.
 */

interface Item {
  id: string;
  label: string;
  intent?: string;
  language?: string;
  subject?: string;
  body?: string;
  file?: string;
}

const sets = import.meta.glob<string>("../fixtures/triage/*.jsonl", { query: "?raw", import: "default", eager: true });
const messages = import.meta.glob<string>("../fixtures/replies/*/*.eml", { query: "?raw", import: "default", eager: true });
const items: Item[] = Object.values(sets).flatMap((text) => text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Item));

async function predicted(item: Item): Promise<string> {
  if (!item.file) return applyRules({ subject: item.subject ?? null, body: item.body ?? "", isOoo: false }).kind ?? "none";
  const message = await parseMessage(messages[`../fixtures/${item.file}`]!);
  return applyRules({ subject: message.subject, body: replyText(message), isOoo: classifyAutoReply(message, Date.now()).outOfOffice }).kind ?? "none";
}

describe("the rules stage on the labelled corpus", async () => {
  const results = await Promise.all(items.map(async (item) => ({ item, predicted: await predicted(item) })));

  it("holds at least 300 replies in several languages, each with a source and licence", () => {
    expect(results.length).toBeGreaterThanOrEqual(300);
    expect(new Set(items.map((i) => i.language)).size).toBeGreaterThanOrEqual(7);
    for (const language of ["en", "de", "fr", "es", "it", "nl", "pt"]) expect(items.filter((i) => i.language === language && i.label === "dnc").length, language).toBeGreaterThan(0);
  });

  it("never assigns a wrong Do Not Contact (precision 1.0)", () => {
    expect(results.filter((r) => r.predicted === "dnc" && r.item.label !== "dnc").map((r) => r.item.id)).toEqual([]);
    expect(results.filter((r) => r.predicted === "dnc").length).toBeGreaterThan(60);
  });

  it("never assigns Interested, and gives interested replies no rule category at all", () => {
    expect(results.some((r) => r.predicted === "interested")).toBe(false);
    const interested = results.filter((r) => r.item.intent === "interested");
    expect(interested.length).toBeGreaterThan(10);
    expect(interested.filter((r) => r.predicted !== "none").map((r) => r.item.id)).toEqual([]);
  });

  it("keeps every rule category it assigns right on this corpus, and finds most of each", () => {
    for (const label of ["dnc", "wrong_person", "ooo", "automated"]) {
      const assigned = results.filter((r) => r.predicted === label);
      expect(assigned.filter((r) => r.item.label !== label).map((r) => r.item.id), label).toEqual([]);
      const support = results.filter((r) => r.item.label === label);
      expect(assigned.length / support.length, label).toBeGreaterThanOrEqual(0.8);
    }
  });
});
