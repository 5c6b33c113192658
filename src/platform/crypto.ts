/**
 * Secrets at rest: AES-256-GCM (WebCrypto) under keys from the Worker secret `SECRETS_KEY`.
 *
 * `SECRETS_KEY` is a keyring: one or more `kid:base64key` (32-byte keys) separated by commas. The
 * first key encrypts; every key decrypts, so a key is rotated by putting a new one first and
 * dropping the old one once nothing is encrypted under it any more.
 *
 * A ciphertext is stored as text, `v1.<kid>.<base64 iv>.<base64 ciphertext+tag>`. The caller names
 * what the secret is for (its `context`, e.g. `webhook-signing-secret:42`); it is authenticated as
 * additional data, so a ciphertext copied into another row or another purpose does not decrypt.
 */
import { fromBase64, toBase64 } from "./bytes";

const VERSION = "v1";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const KID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** SECRETS_KEY is missing or malformed: nothing can be encrypted or decrypted until an operator fixes it. */
export class SecretsKeyError extends Error {
  override readonly name = "SecretsKeyError";
}

/** A ciphertext that does not open: unknown key id, wrong context, or altered. */
export class SecretDecryptionError extends Error {
  override readonly name = "SecretDecryptionError";
}

export interface Keyring {
  /** The key id new secrets are encrypted under (the first in SECRETS_KEY). */
  readonly current: string;
  readonly keys: ReadonlyMap<string, CryptoKey>;
  /** The same keys as HKDF input, so other uses (tracking tokens) derive their own keys instead of reusing these. */
  readonly material: ReadonlyMap<string, CryptoKey>;
}

/** Checks the whole configuration before any key is imported; messages never contain key material. */
function parseKeyring(source: string | undefined): { kid: string; raw: Uint8Array<ArrayBuffer> }[] {
  if (!source?.trim()) {
    throw new SecretsKeyError("SECRETS_KEY is not set: secrets cannot be stored or read (see README, Configuration)");
  }
  const entries = source.split(",").map((entry, index) => {
    const position = `SECRETS_KEY entry ${index + 1}`;
    const separator = entry.indexOf(":");
    if (separator < 0) throw new SecretsKeyError(`${position} is not "kid:base64key"`);
    const kid = entry.slice(0, separator).trim();
    if (!KID_PATTERN.test(kid)) throw new SecretsKeyError(`${position}: the key id must be 1-32 of A-Z a-z 0-9 _ -`);
    const raw = fromBase64(entry.slice(separator + 1).trim());
    if (raw?.length !== KEY_BYTES) throw new SecretsKeyError(`${position} (${kid}): the key must be ${KEY_BYTES} bytes in base64`);
    return { kid, raw };
  });
  const kids = new Set(entries.map((entry) => entry.kid));
  if (kids.size !== entries.length) throw new SecretsKeyError("SECRETS_KEY names the same key id twice");
  return entries;
}

let cached: { source: string | undefined; keyring: Promise<Keyring> } | undefined;

/** The keyring of a SECRETS_KEY value, parsed and imported once per isolate (per distinct value). */
export function loadKeyring(source: string | undefined): Promise<Keyring> {
  if (cached && cached.source === source) return cached.keyring;
  let entries: ReturnType<typeof parseKeyring>;
  try {
    entries = parseKeyring(source);
  } catch (error) {
    return Promise.reject(error);
  }
  const keyring = Promise.all(
    entries.map(async ({ kid, raw }) => ({
      kid,
      key: await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]),
      material: await crypto.subtle.importKey("raw", raw, "HKDF", false, ["deriveKey"]),
    })),
  ).then((keys) => ({
    current: entries[0]!.kid,
    keys: new Map(keys.map(({ kid, key }) => [kid, key])),
    material: new Map(keys.map(({ kid, material }) => [kid, material])),
  }));
  cached = { source, keyring };
  return keyring;
}

function additionalData(kid: string, context: string): Uint8Array {
  return new TextEncoder().encode(`${VERSION}.${kid}.${context}`);
}

export async function encryptSecret(keyring: Keyring, plaintext: string, context: string): Promise<string> {
  const kid = keyring.current;
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: additionalData(kid, context) },
    keyring.keys.get(kid)!,
    new TextEncoder().encode(plaintext),
  );
  return [VERSION, kid, toBase64(iv), toBase64(new Uint8Array(sealed))].join(".");
}

export async function decryptSecret(keyring: Keyring, ciphertext: string, context: string): Promise<string> {
  const [version, kid, ivText, sealedText, ...rest] = ciphertext.split(".");
  const iv = fromBase64(ivText ?? "");
  const sealed = fromBase64(sealedText ?? "");
  if (version !== VERSION || !kid || rest.length > 0 || iv?.length !== IV_BYTES || !sealed) {
    throw new SecretDecryptionError(`not a ${VERSION} secret ciphertext`);
  }
  const key = keyring.keys.get(kid);
  if (!key) throw new SecretDecryptionError(`encrypted under key id "${kid}", which SECRETS_KEY does not hold`);
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: additionalData(kid, context) }, key, sealed);
    return new TextDecoder().decode(plain);
  } catch {
    throw new SecretDecryptionError(`secret under key id "${kid}" does not open for ${context}: altered, or stored for another use`);
  }
}
