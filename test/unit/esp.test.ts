import { describe, expect, it } from "vitest";
import { espDomainType, providerOfDomain, providerOfMailbox } from "../../src/esp/rules";

describe("a domain's and a mailbox's provider (CONTRACT 23.3)", () => {
  it("reads the provider from the MX hosts", () => {
    expect(providerOfDomain("acme.example", ["aspmx.l.google.com.", "alt1.aspmx.l.google.com"])).toBe("google");
    expect(providerOfDomain("acme.example", ["ALT2.ASPMX.L.GOOGLEMAIL.COM"])).toBe("google");
    expect(providerOfDomain("acme.example", ["acme-example.mail.protection.outlook.com"])).toBe("microsoft");
    expect(providerOfDomain("acme.example", ["mx1.mailgun.example", "mx2.mailgun.example"])).toBe("other");
    // Look-alikes are other providers' hosts.
    expect(providerOfDomain("acme.example", ["google.com.evil.example"])).toBe("other");
    expect(providerOfDomain("acme.example", ["notgoogle.com"])).toBe("other");
    // No MX host: unknown, nothing to match on.
    expect(providerOfDomain("acme.example", [])).toBeNull();
  });

  it("knows Microsoft's consumer domains whatever their MX says", () => {
    for (const domain of ["outlook.com", "hotmail.com", "hotmail.co.uk", "live.com", "live.fr", "msn.com"]) {
      expect(providerOfDomain(domain, []), domain).toBe("microsoft");
    }
    expect(providerOfDomain("outlook.com.example", ["mx.example"])).toBe("other");
  });

  it("takes a mailbox's provider from its type, else from its domain", () => {
    expect(providerOfMailbox("GMAIL", null)).toBe("google");
    expect(providerOfMailbox("OUTLOOK", "other")).toBe("microsoft");
    expect(providerOfMailbox("SMTP", "google")).toBe("google");
    expect(providerOfMailbox("ZOHO", null)).toBeNull();
  });

  it("answers the hosted esp_domain_type: 1 google, 2 microsoft, 0 other or unknown", () => {
    expect([espDomainType("google"), espDomainType("microsoft"), espDomainType("other"), espDomainType(null)]).toEqual([1, 2, 0, 0]);
  });
});
