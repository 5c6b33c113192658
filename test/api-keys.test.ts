import { describe, expect, it } from "vitest";
import { digestKey, generateKey, keyKindOf, maskKey } from "../src/keys/rules";

describe("API key values", () => {
  it("carry a recognisable prefix and 40 base62 characters", () => {
    expect(generateKey("account")).toMatch(/^slv_acct_[0-9A-Za-z]{40}$/);
    expect(generateKey("client")).toMatch(/^slv_cli_[0-9A-Za-z]{40}$/);
  });

  it("are unique and use the whole alphabet", () => {
    const keys = Array.from({ length: 500 }, () => generateKey("client"));
    expect(new Set(keys).size).toBe(500);
    const seen = new Set(keys.flatMap((k) => [...k.slice(8)]));
    expect(seen.size).toBe(62);
  });

  it("tell their kind by prefix", () => {
    expect(keyKindOf("slv_acct_abc")).toBe("account");
    expect(keyKindOf("slv_cli_abc")).toBe("client");
    expect(keyKindOf("sk_live_abc")).toBeNull();
  });

  it("digest to lowercase hex SHA-256", async () => {
    expect(await digestKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("mask to prefix and last four", () => {
    expect(maskKey("client", "wxyz")).toBe("slv_cli_…wxyz");
  });
});
