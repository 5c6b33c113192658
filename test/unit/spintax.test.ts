import { describe, expect, it } from "vitest";
import { stableFraction, stableHash } from "../../src/sequences/hash";
import { parseSpintax, spin, spinChoice } from "../../src/sequences/spintax";
import { renderTemplate } from "../../src/sequences/template";

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
