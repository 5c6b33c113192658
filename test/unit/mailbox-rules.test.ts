import { describe, expect, it } from "vitest";
import { defaultPortType, mailHost, newSecret, SECRET_MASK, trackingDomain, warmupStats } from "../../src/mailboxes/rules";

describe("mailbox rules", () => {
  it("infers the port type from the port", () => {
    expect([465, 993, 587, 143, 2525].map(defaultPortType)).toEqual(["SSL", "SSL", "TLS", "TLS", "TLS"]);
  });

  it("keeps a stored secret for absent, null, empty and the mask", () => {
    expect([undefined, null, "", SECRET_MASK].map(newSecret)).toEqual([undefined, undefined, undefined, undefined]);
    expect(newSecret("s3cret")).toBe("s3cret");
  });

  it("normalises hosts and refuses local ones unless allowed", () => {
    expect(mailHost("SMTP.Example.COM.", false)).toEqual({ host: "smtp.example.com" });
    expect(mailHost("8.8.8.8", false)).toEqual({ host: "8.8.8.8" });
    expect(mailHost("2001:db8::1", false)).toEqual({ host: "2001:db8::1" });
    for (const host of ["localhost", "a.localhost", "x.local", "y.internal", "127.0.0.2", "0177.0.0.1", "2130706433", "100.64.0.1", "224.0.0.1", "::", "fc00::1", "::ffff:10.0.0.1", "single"]) {
      expect(mailHost(host, false), host).toHaveProperty("problem");
    }
    expect(mailHost("127.0.0.1", true)).toEqual({ host: "127.0.0.1" });
    expect(mailHost("mail.local", true)).toEqual({ host: "mail.local" });
    for (const bad of ["", " ", "a b.com", "smtp.example.com/x", "smtp.example.com:25", "-bad.example.com", "a..b.com"]) {
      expect(mailHost(bad, true), bad).toHaveProperty("problem");
    }
  });

  it("drops a tracking domain's scheme and trailing slash, and wants a public name", () => {
    expect(trackingDomain("https://Track.Example.org/")).toEqual({ host: "track.example.org" });
    expect(trackingDomain("track.example.org")).toEqual({ host: "track.example.org" });
    expect(trackingDomain("")).toEqual({ host: "" });
    expect(trackingDomain("8.8.8.8")).toHaveProperty("problem");
    expect(trackingDomain("localhost")).toHaveProperty("problem");
  });

  it("answers 7 UTC days of empty warmup stats ending today", () => {
    const stats = warmupStats(Date.UTC(2026, 0, 3, 12));
    expect(stats.daily_stats.map((d) => d.date)).toEqual(["2025-12-28", "2025-12-29", "2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02", "2026-01-03"]);
  });
});
