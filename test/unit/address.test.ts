import { describe, expect, it } from "vitest";
import { isValidEmail, normaliseEmail, smtpAddress } from "../../src/mail/address";

describe("the address rule (RFC 5321 mailbox as senders use it)", () => {
  it("accepts dot-atom local parts with every atext character, and LDH domains", () => {
    for (const address of [
      "a@b.co",
      "ann.lee@example.com",
      "o'brien+tag@example.co.uk",
      "x!#$%&'*+/=?^_`{|}~-y@mail-1.example.org",
      "1234@123.example",
      "ann@xn--bcher-kva.de",
    ]) {
      expect(isValidEmail(address), address).toBe(true);
    }
  });

  it("refuses NUL, control characters, specials and the forms nobody sends to", () => {
    for (const address of [
      "ann\0@example.com",
      "ann@example.com\0",
      "an\u0001n@example.com",
      "ann\u007f@example.com",
      "an\u0085n@example.com",
      "an\u200bn@example.com",
      "an\u00a0n@example.com",
      "<ann>@example.com",
      "ann@exa<mple.com",
      "a(n)n@example.com",
      "a,nn@example.com",
      "a;nn@example.com",
      "a:nn@example.com",
      '"ann"@example.com',
      '"a n"@example.com',
      "a\\n@example.com",
      "a[n]@example.com",
      "a b@c.de",
      "a@@b.de",
      "@b.de",
      "ann@",
      "a@b",
      ".ann@example.com",
      "ann.@example.com",
      "an..n@example.com",
      "ann@example..com",
      "ann@.example.com",
      "ann@example.com.",
      "ann@-example.com",
      "ann@example-.com",
      "ann@exa_mple.com",
      "ann@[127.0.0.1]",
      "ann@127.0.0.1",
      "ann@example.123",
      "ann@ex%61mple.com",
      "ann@example.com:25",
      "ann@example.com/x",
      `ann@${"d".repeat(64)}.com`,
      `${"x".repeat(65)}@example.com`,
    ]) {
      expect(isValidEmail(address), JSON.stringify(address)).toBe(false);
      expect(smtpAddress(address), JSON.stringify(address)).toBeNull();
    }
  });

  it("holds the whole address to 254 octets as sent, labels to 63", () => {
    const local = "x".repeat(64);
    const domain = `${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(57)}.com`;
    const at254 = `${local}@${domain}`;
    expect(at254).toHaveLength(254);
    expect(isValidEmail(at254)).toBe(true);
    expect(isValidEmail(`${local}@g${domain}`)).toBe(false);
  });

  it("accepts international domains as U-labels and sends them as A-labels", () => {
    expect(isValidEmail("ann@bücher.de")).toBe(true);
    expect(smtpAddress("ann@bücher.de")).toBe("ann@xn--bcher-kva.de");
    expect(smtpAddress("ann@例え.テスト")).toBe("ann@xn--r8jz45g.xn--zckzah");
    expect(smtpAddress("ann@example.com")).toBe("ann@example.com");
    expect(isValidEmail("ann@bü cher.de")).toBe(false);
  });

  it("accepts a UTF-8 local part (flagged risky smtputf8 by hygiene), without controls or separators", () => {
    expect(isValidEmail("jörg@example.de")).toBe(true);
    expect(isValidEmail("用户@例子.广告")).toBe(true);
    expect(smtpAddress("jörg@bücher.de")).toBe("jörg@xn--bcher-kva.de");
    expect(isValidEmail("jö\u2028rg@example.de")).toBe(false);
  });

  it("normalises by trimming, composing (NFC) and lower-casing", () => {
    expect(normaliseEmail("  Ann.Lee@Example.COM \t")).toBe("ann.lee@example.com");
    expect(normaliseEmail("Jo\u0308rg@B\u00dcCHER.de")).toBe("j\u00f6rg@b\u00fccher.de");
  });
});
