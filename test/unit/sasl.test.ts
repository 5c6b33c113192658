import { describe, expect, it } from "vitest";
import { oauthChallengeStatus, oauthErrorAcknowledgement, oauthInitialResponse, oauthMechanism } from "../../src/mail/sasl";

describe("SASL for OAuth tokens", () => {
  it("takes XOAUTH2 when offered, else OAUTHBEARER, else none", () => {
    expect(oauthMechanism(["LOGIN", "PLAIN", "XOAUTH2", "OAUTHBEARER"])).toBe("XOAUTH2");
    expect(oauthMechanism(["OAUTHBEARER"])).toBe("OAUTHBEARER");
    expect(oauthMechanism(["PLAIN", "LOGIN"])).toBeNull();
  });

  it("builds Google's XOAUTH2 and RFC 7628's OAUTHBEARER initial responses", () => {
    expect(oauthInitialResponse("XOAUTH2", "ann@acme.example", "ya29.token", { host: "smtp.gmail.com", port: 465 })).toBe(
      "user=ann@acme.example\x01auth=Bearer ya29.token\x01\x01",
    );
    expect(oauthInitialResponse("OAUTHBEARER", "a=b,c@acme.example", "tok", { host: "imap.example", port: 993 })).toBe(
      "n,a=a=3Db=2Cc@acme.example,\x01host=imap.example\x01port=993\x01auth=Bearer tok\x01\x01",
    );
  });

  it("acknowledges an error challenge as each mechanism expects and reads its status", () => {
    expect(oauthErrorAcknowledgement("XOAUTH2")).toBe("");
    expect(oauthErrorAcknowledgement("OAUTHBEARER")).toBe("\x01");
    expect(oauthChallengeStatus('{"status":"401","schemes":"bearer","scope":"https://mail.google.com/"}')).toBe("401");
    expect(oauthChallengeStatus("not json")).toBeNull();
  });
});
