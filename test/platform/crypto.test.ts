import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, loadKeyring, SecretDecryptionError, SecretsKeyError } from "../../src/platform/crypto";

function key(fill: number): string {
  return btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
}

const OLD = `old:${key(1)}`;
const NEW = `new:${key(2)}`;

/** Flips one bit of byte `at` (negative: from the end) of a ciphertext's part. */
function tamper(ciphertext: string, part: number, at = 0): string {
  const parts = ciphertext.split(".");
  const bytes = Uint8Array.from(atob(parts[part]!), (c) => c.charCodeAt(0));
  bytes[at < 0 ? bytes.length + at : at]! ^= 1;
  parts[part] = btoa(String.fromCharCode(...bytes));
  return parts.join(".");
}

describe("secrets at rest (AES-256-GCM under SECRETS_KEY)", () => {
  it("round-trips, as v1.<kid>.<iv>.<ciphertext>, a fresh IV every time, nothing of the plaintext visible", async () => {
    const keyring = await loadKeyring(OLD);
    const plaintext = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LTAxMjM0NTY3 ünïcode";
    const one = await encryptSecret(keyring, plaintext, "webhook-signing-secret:7");
    const two = await encryptSecret(keyring, plaintext, "webhook-signing-secret:7");
    expect(one).toMatch(/^v1\.old\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expect(one).not.toBe(two);
    expect(one).not.toContain("c2VjcmV0");
    expect(await decryptSecret(keyring, one, "webhook-signing-secret:7")).toBe(plaintext);
    expect(await decryptSecret(keyring, two, "webhook-signing-secret:7")).toBe(plaintext);
  });

  it("does not open under another context (another row, another purpose)", async () => {
    const keyring = await loadKeyring(OLD);
    const sealed = await encryptSecret(keyring, "s3cret", "webhook-signing-secret:7");
    for (const context of ["webhook-signing-secret:8", "webhook-secret-key:7", ""]) {
      await expect(decryptSecret(keyring, sealed, context), context).rejects.toBeInstanceOf(SecretDecryptionError);
    }
  });

  it("does not open once altered: IV, ciphertext, tag, key id or shape", async () => {
    const keyring = await loadKeyring(`${OLD},${NEW}`);
    const sealed = await encryptSecret(keyring, "s3cret", "ctx");
    const altered = [tamper(sealed, 2), tamper(sealed, 3), tamper(sealed, 3, -1), sealed.replace("v1.old.", "v1.new."), sealed.replace("v1.", "v2."), `${sealed}.x`, "plain-text"];
    for (const ciphertext of altered) {
      await expect(decryptSecret(keyring, ciphertext, "ctx"), ciphertext).rejects.toBeInstanceOf(SecretDecryptionError);
    }
  });

  it("rotates: the first key encrypts, every key decrypts, and a key that is gone says which", async () => {
    const before = await loadKeyring(OLD);
    const oldSealed = await encryptSecret(before, "kept", "ctx");

    const during = await loadKeyring(`${NEW}, ${OLD}`);
    expect(during.current).toBe("new");
    const newSealed = await encryptSecret(during, "fresh", "ctx");
    expect(newSealed.startsWith("v1.new.")).toBe(true);
    expect(await decryptSecret(during, oldSealed, "ctx")).toBe("kept");
    expect(await decryptSecret(during, newSealed, "ctx")).toBe("fresh");

    const after = await loadKeyring(NEW);
    expect(await decryptSecret(after, newSealed, "ctx")).toBe("fresh");
    await expect(decryptSecret(after, oldSealed, "ctx")).rejects.toThrow(/key id "old"/);
  });

  it("parses a keyring once per value", async () => {
    const first = loadKeyring(NEW);
    expect(loadKeyring(NEW)).toBe(first);
    expect(loadKeyring(OLD)).not.toBe(first);
  });

  it("fails loudly, naming the problem but no key material, when SECRETS_KEY is missing or malformed", async () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /not set/],
      ["", /not set/],
      ["  ", /not set/],
      ["change-me", /entry 1 is not "kid:base64key"/],
      [`a:${btoa("too short")}`, /entry 1 \(a\): the key must be 32 bytes/],
      [`${OLD},b:${key(3).slice(0, 20)}`, /entry 2 \(b\): the key must be 32 bytes/],
      [`a:not base64!`, /must be 32 bytes/],
      [`a.b:${key(3)}`, /key id must be/],
      [`:${key(3)}`, /key id must be/],
      [`${OLD},${OLD.replace(key(1), key(4))}`, /same key id twice/],
    ];
    for (const [source, message] of cases) {
      const failure = loadKeyring(source);
      await expect(failure, String(source)).rejects.toBeInstanceOf(SecretsKeyError);
      await expect(failure, String(source)).rejects.toThrow(message);
      await expect(failure).rejects.not.toThrow(key(1));
    }
  });
});
