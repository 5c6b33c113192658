import { describe, expect, it } from "vitest";
import { bareTrackingDomain, defaultPortType, newSecret, SECRET_MASK } from "../../src/mailboxes/rules";

describe("mailbox rules", () => {
  it("infers the port type from the port", () => {
    expect([465, 993, 587, 143, 2525].map(defaultPortType)).toEqual(["SSL", "SSL", "TLS", "TLS", "TLS"]);
  });

  it("keeps a stored secret for absent, null, empty and the mask", () => {
    expect([undefined, null, "", SECRET_MASK].map(newSecret)).toEqual([undefined, undefined, undefined, undefined]);
    expect(newSecret("s3cret")).toBe("s3cret");
  });

  it("drops a tracking domain's scheme and trailing slashes (the host rule is the outbound one: test/platform/outbound.test.ts)", () => {
    expect(bareTrackingDomain("https://Track.Example.org/")).toBe("Track.Example.org");
    expect(bareTrackingDomain(" track.example.org// ")).toBe("track.example.org");
    expect(bareTrackingDomain("")).toBe("");
  });
});
