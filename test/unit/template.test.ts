import { describe, expect, it } from "vitest";
import { parseTemplate, renderTemplate, templateIssues, templateVariables, variableValue } from "../../src/sequences/template";

const lead = {
  first_name: "Ada",
  last_name: "Lovelace",
  email: "ada@example.com",
  company_name: "Analytical <Engines> & Co",
  phone_number: null,
  website: "",
  custom_fields: { Industry: "Computing", industry: "lowercase wins only exactly", "Company Size": 12, tier: "  ", nested: { a: 1 } },
};

describe("renderTemplate", () => {
  it("substitutes standard fields with or without spaces inside the braces", () => {
    expect(renderTemplate("Hi {{first_name}} {{ last_name }}, at {{email}}", lead)).toBe("Hi Ada Lovelace, at ada@example.com");
  });

  it("renders a missing or empty value as nothing", () => {
    expect(renderTemplate("[{{phone_number}}][{{website}}][{{location}}][{{no_such_key}}]", lead)).toBe("[][][][]");
  });

  it("matches custom keys exactly first, then ignoring case", () => {
    expect(renderTemplate("{{industry}}|{{Industry}}|{{INDUSTRY}}", lead)).toBe("lowercase wins only exactly|Computing|Computing");
    expect(renderTemplate("{{Company Size}} people", lead)).toBe("12 people");
    expect(variableValue({ custom_fields: { Region: "EMEA" } }, "region")).toBe("EMEA");
  });

  it("matches standard fields ignoring case", () => {
    expect(renderTemplate("{{First_Name}}", lead)).toBe("Ada");
  });

  it("uses the fallback when the value is missing, empty or blank, not when present", () => {
    expect(renderTemplate("Hi {{phone_number | there}}, {{first_name|there}}, {{tier|valued customer}}, {{x|}}!", lead)).toBe(
      "Hi there, Ada, valued customer, !",
    );
  });

  it("renders objects in custom fields as nothing (no [object Object])", () => {
    expect(renderTemplate("<{{nested|none}}>", lead)).toBe("<none>");
  });

  it("escapes lead values in an HTML body only, never the fallback or the signature", () => {
    const template = "<p>{{company_name}} {{location|<b>you</b>}}</p>%signature%";
    const options = { signature: "<i>Bob</i>" };
    expect(renderTemplate(template, lead, { ...options, html: true })).toBe("<p>Analytical &lt;Engines&gt; &amp; Co <b>you</b></p><i>Bob</i>");
    expect(renderTemplate(template, lead, options)).toBe("<p>Analytical <Engines> & Co <b>you</b></p><i>Bob</i>");
  });

  it("replaces %signature% with the mailbox signature, or nothing", () => {
    expect(renderTemplate("Thanks,\n%signature%", lead, { signature: "Bob\nSalvo" })).toBe("Thanks,\nBob\nSalvo");
    expect(renderTemplate("Thanks,\n%signature%", lead)).toBe("Thanks,\n");
    expect(renderTemplate("Thanks %signature%", lead, { signature: null })).toBe("Thanks ");
  });

  it("never expands a value again (one pass)", () => {
    const sneaky = { first_name: "{{email}} %signature%", email: "x@y.z" };
    expect(renderTemplate("Hi {{first_name}}", sneaky, { signature: "SIG" })).toBe("Hi {{email}} %signature%");
  });

  it("leaves malformed variables as written", () => {
    expect(renderTemplate("a {{}} b {{first_name", lead)).toBe("a {{}} b {{first_name");
  });
});

describe("templateVariables", () => {
  it("lists distinct names in order of first use, trimmed, skipping malformed ones", () => {
    expect(templateVariables("{{ company_name }} {{first_name|x}} {{company_name}} {{Company Size}} {{}} {{a{b}}")).toEqual([
      "company_name",
      "first_name",
      "Company Size",
    ]);
  });

  it("parses text, variables with fallback and signatures", () => {
    expect(parseTemplate("Hi {{ first_name | there }}%signature%")).toEqual([
      { kind: "text", text: "Hi " },
      { kind: "variable", name: "first_name", fallback: "there", raw: "{{ first_name | there }}", offset: 3 },
      { kind: "signature" },
    ]);
  });
});

describe("templateIssues", () => {
  it("accepts standard fields and any well-formed custom key when custom keys are open", () => {
    expect(templateIssues("{{first_name}} {{ Company Size }} {{deal.stage|new}} {{x-y_z}}", "any")).toEqual([]);
  });

  it("reports an unclosed variable at its position", () => {
    expect(templateIssues("Hello {{first_name", "any")).toEqual([
      { code: "unclosed_variable", offset: 6, message: '"{{" at character 7 is never closed by "}}"' },
    ]);
  });

  it("reports empty names and bad characters", () => {
    expect(templateIssues("{{ }} {{|x}} {{first name!}} {{a  b}} {{{x}}}", "any").map((i) => [i.code, i.offset])).toEqual([
      ["empty_variable", 0],
      ["empty_variable", 6],
      ["invalid_variable_name", 13],
      ["invalid_variable_name", 29],
      ["invalid_variable_name", 38],
    ]);
    expect(templateIssues("{{{first_name}}}", "any")[0]!.message).toBe('{{{first_name}} at character 1: a variable cannot contain "{" or "}"');
    expect(templateIssues("{{a<b}}", "any")[0]!.message).toBe(
      '{{a<b}} at character 1: a variable name is letters, digits, "_", "-", "." and single spaces (at most 100)',
    );
  });

  it("flags a near miss of a standard field unless it is a known custom key", () => {
    expect(templateIssues("Hi {{firstName}}", "any")).toEqual([
      { code: "unknown_variable", offset: 3, message: "{{firstName}} at character 4 is not a lead field; did you mean {{first_name}}?" },
    ]);
    expect(templateIssues("{{Company Name}}", "any")[0]!.message).toContain("did you mean {{company_name}}?");
    expect(templateIssues("Hi {{firstName}}", new Set(["FirstName"]))).toEqual([]);
  });

  it("with a set of known keys, flags names that are neither fields nor keys (case-insensitively)", () => {
    const known = new Set(["Industry"]);
    expect(templateIssues("{{industry}} {{email}} {{revenue}}", known)).toEqual([
      { code: "unknown_variable", offset: 23, message: "{{revenue}} at character 24 is neither a lead field nor a custom field" },
    ]);
  });

  it("sorts issues by position across syntax and name checks", () => {
    expect(templateIssues("{{firstName}} {{", "any").map((i) => i.code)).toEqual(["unknown_variable", "unclosed_variable"]);
  });
});
