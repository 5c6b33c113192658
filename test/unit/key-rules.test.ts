import { describe, expect, it } from "vitest";
import { digestKey, KEY_PREFIX, keyKindOf, lastFour, maskKey, mintKey } from "../../src/keys/rules";

describe("key rules, beyond test/api-keys.test.ts", () => {
  it("has distinct prefixes, neither a prefix of the other", () => {
    expect(KEY_PREFIX).toEqual({ account: "slv_acct_", client: "slv_cli_" });
    expect(keyKindOf("slv_acct")).toBeNull();
    expect(keyKindOf("SLV_ACCT_abc")).toBeNull();
    expect(keyKindOf("xslv_cli_abc")).toBeNull();
  });

  it("masks an account key and keeps the last four characters", () => {
    expect(maskKey("account", "0aZ9")).toBe("slv_acct_…0aZ9");
    expect(lastFour("slv_cli_abcdefWXYZ")).toBe("WXYZ");
    expect(lastFour("abc")).toBe("abc");
  });

  it("mints a key whose stored hash and last four are those of the value shown once", async () => {
    const minted = await mintKey("account");
    expect(minted.value).toMatch(/^slv_acct_[0-9A-Za-z]{40}$/);
    expect(minted.keyHash).toBe(await digestKey(minted.value));
    expect(minted.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(minted.last4).toBe(minted.value.slice(-4));
    expect(keyKindOf((await mintKey("client")).value)).toBe("client");
  });

  it("digests the exact value, so one changed character gives another hash", async () => {
    expect(await digestKey("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(await digestKey("slv_cli_a")).not.toBe(await digestKey("slv_cli_A"));
  });
});
