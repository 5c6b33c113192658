import { describe, expect, it } from "vitest";
import { isValidEmail, normaliseEmail } from "../../src/mail/address";
import { sortUpload } from "../../src/leads/rules";

describe("lead upload", () => {
  it("normalises an address by trimming and lower-casing", () => {
    expect(normaliseEmail("  Ann.Lee@Example.COM \t")).toBe("ann.lee@example.com");
  });

  it("validates with the one address rule (test/unit/address.test.ts)", () => {
    expect(isValidEmail("a@b.co")).toBe(true);
    expect(isValidEmail("a@b")).toBe(false);
    expect(isValidEmail("a b@c.de")).toBe(false);
    expect(isValidEmail("a@@b.de")).toBe(false);
    expect(isValidEmail("@b.de")).toBe(false);
    expect(isValidEmail("ann\0@example.com")).toBe(false);
  });

  it("keeps the first of each address (case and spaces ignored), counting duplicates and invalid ones apart", () => {
    const sorted = sortUpload([
      { email: " Ann@Example.com", first_name: "Ann" },
      { email: "not-an-email", first_name: "Nobody" },
      { email: "ann@example.COM", first_name: "Second Ann" },
      { email: "bob@example.com", first_name: "Bob" },
      { email: "", first_name: "Empty" },
      { email: "BOB@example.com ", first_name: "Bob again" },
      { email: "not-an-email" },
      { email: "nul\0@example.com" },
      { email: "<eve>@example.com" },
    ]);
    expect(sorted).toEqual({
      unique: [
        { email: "ann@example.com", first_name: "Ann", timezone: null },
        { email: "bob@example.com", first_name: "Bob", timezone: null },
      ],
      duplicateCount: 2,
      invalidEmailCount: 5,
      invalidTimezoneCount: 0,
    });
  });

  it("validates the normalised address, and does not change the caller's leads", () => {
    const lead = { email: "  Cat@Example.org  " };
    expect(sortUpload([lead])).toEqual({ unique: [{ email: "cat@example.org", timezone: null }], duplicateCount: 0, invalidEmailCount: 0, invalidTimezoneCount: 0 });
    expect(lead.email).toBe("  Cat@Example.org  ");
    expect(sortUpload([])).toEqual({ unique: [], duplicateCount: 0, invalidEmailCount: 0, invalidTimezoneCount: 0 });
  });
});
