import { describe, expect, it } from "vitest";
import { stableFraction, stableHash } from "../../src/sequences/hash";
import { parseSpintax, spin, spinChoice } from "../../src/sequences/spintax";
import { renderTemplate } from "../../src/sequences/template";
import { composeEmail } from "../../src/engine/compose";

describe("stableHash", () => {
  // Expected values computed by an independent Python implementation of FNV-1a + murmur3 fmix32.
  it("is FNV-1a 32 with murmur3's finaliser", () => {
    expect(stableHash("")).toBe(2872998923);
    expect(stableHash("a")).toBe(444641715);
    expect(stableHash("spin:42:1::0")).toBe(58597761);
    expect(stableFraction("spin:42:1::1")).toBeCloseTo(0.608702648896724, 12);
  });
});

describe("parseSpintax", () => {
  it("finds groups of single braces with at least one |", () => {
    expect(parseSpintax("{Hi|Hello|Hey} there")).toEqual([
      { kind: "group", options: ["Hi", "Hello", "Hey"], offset: 0 },
      { kind: "text", text: " there" },
    ]);
  });

  it("leaves braces without |, variables, unclosed and nested groups' outer braces as text", () => {
    const text = '{not spintax} {{first_name|there}} {"a":1} {a|b';
    expect(parseSpintax(text)).toEqual([{ kind: "text", text }]);
    expect(parseSpintax("{a {b|c} d}")).toEqual([
      { kind: "text", text: "{a " },
      { kind: "group", options: ["b", "c"], offset: 3 },
      { kind: "text", text: " d}" },
    ]);
  });

  it("lets an option hold a variable whose | is not a separator", () => {
    expect(parseSpintax("{Hi {{first_name|there}}|Hello}")).toEqual([
      { kind: "group", options: ["Hi {{first_name|there}}", "Hello"], offset: 0 },
    ]);
  });

  it("keeps empty options (an optional word)", () => {
    expect(parseSpintax("{|really }good")).toEqual([
      { kind: "group", options: ["", "really "], offset: 0 },
      { kind: "text", text: "good" },
    ]);
  });
});

describe("spin", () => {
  // Choices from the hash fractions (independent Python): spin:42:1::0 = 0.0136 -> 0 of 3,
  // spin:42:1::1 = 0.6087 -> 1 of 2, spin:42:1:subject:0 = 0.6131 -> 1 of 3,
  // spin:7:1::0 = 0.4002 -> 1 of 3, spin:7:2::0 = 0.7819 -> 2 of 3.
  it("picks by (record, step, part, position)", () => {
    expect(spin("{Hi|Hello|Hey} {{first_name}}, {a|b}", { recordId: 42, step: 1 })).toBe("Hi {{first_name}}, b");
    expect(spin("{Hi|Hello|Hey}", { recordId: 42, step: 1, part: "subject" })).toBe("Hello");
    expect(spin("{Hi|Hello|Hey}", { recordId: 7, step: 1 })).toBe("Hello");
    expect(spin("{Hi|Hello|Hey}", { recordId: 7, step: 2 })).toBe("Hey");
    expect(spinChoice({ recordId: "42", step: 1 }, 0, 3)).toBe(0);
  });

  it("gives the same record the same words every time", () => {
    const text = "{Hi|Hello|Hey|Howdy} {there|friend}, {quick|short} {question|note}";
    const first = spin(text, { recordId: 123456, step: 3 });
    for (let i = 0; i < 50; i++) expect(spin(text, { recordId: 123456, step: 3 })).toBe(first);
  });

  it("uses every option across leads", () => {
    const seen = new Set<string>();
    for (let id = 1; id <= 200; id++) seen.add(spin("{Hi|Hello|Hey}", { recordId: id, step: 1 }));
    expect([...seen].sort()).toEqual(["Hello", "Hey", "Hi"]);
  });

  it("runs before variables, so a value with | or braces is never spun", () => {
    const lead = { first_name: "{A|B}", company_name: "x|y" };
    const text = renderTemplate(spin("{Hi|Hi} {{first_name}} of {{company_name}}", { recordId: 1, step: 1 }), lead);
    expect(text).toBe("Hi {A|B} of x|y");
  });
});

describe("incremental distribution (CONTRACT 21.1)", () => {
  it("gives the k-th record option k mod n of every group, whatever its id", () => {
    const text = "{Hi|Hello|Hey} {there|you}";
    const spun = [0, 1, 2, 3, 4, 5].map((k) => spin(text, { recordId: 1000 + 7 * k, step: 1, moduloIndex: k }));
    expect(spun).toEqual(["Hi there", "Hello you", "Hey there", "Hi you", "Hello there", "Hey you"]);
  });
});

describe("composeEmail's spintax mode", () => {
  const base = {
    recordId: 41,
    step: { seqNumber: 1, subject: "{A|B|C}", emailBody: "{one|two|three}", variants: [] },
    lead: { email: "ann@example.com" },
    sender: { fromName: "Ada", fromEmail: "ada@sender.example", signature: null, replyTo: null },
    thread: [],
    messageId: "<m@sender.example>",
    unsubscribeUrl: "https://u.example/x",
    track: async (html: string) => html,
  };
  const settings = { unsubscribeText: "", addUnsubscribeTag: false, sendAsPlainText: true, forcePlainText: false };

  it("takes the record's spintax_modulo_index in the incremental mode, and the hash otherwise", async () => {
    const incremental = await composeEmail({ ...base, spintaxIndex: 4, settings: { ...settings, spintaxDistributionMode: 1 } });
    expect([incremental.subject, incremental.body]).toEqual(["B", "two"]);
    const random = await composeEmail({ ...base, spintaxIndex: 4, settings: { ...settings, spintaxDistributionMode: 2 } });
    const hashed = spin("{A|B|C}", { recordId: 41, step: 1, part: "subject" });
    expect(random.subject).toBe(hashed);
  });
});
