const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 40;

export const KEY_PREFIX = { account: "slv_acct_", client: "slv_cli_" } as const;
export type KeyKind = keyof typeof KEY_PREFIX;

/** Uniform base62 characters: bytes at or above 248 (= 4 * 62) are rejected to avoid modulo bias. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateKey(kind: KeyKind): string {
  return KEY_PREFIX[kind] + randomBase62(RANDOM_LENGTH);
}

export function keyKindOf(value: string): KeyKind | null {
  if (value.startsWith(KEY_PREFIX.account)) return "account";
  if (value.startsWith(KEY_PREFIX.client)) return "client";
  return null;
}

export async function digestKey(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  // Hex by hand, not through platform/bytes.ts: scripts/seed.mjs loads this file in plain Node,
  // which resolves no extensionless import.
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function lastFour(value: string): string {
  return value.slice(-4);
}

/** What listings show in place of a key: its kind prefix and last four characters. */
export function maskKey(kind: KeyKind, last4: string): string {
  return `${KEY_PREFIX[kind]}…${last4}`;
}

/** Everything stored about a freshly minted key, plus the value to show exactly once. */
export async function mintKey(kind: KeyKind): Promise<{ value: string; keyHash: string; last4: string }> {
  const value = generateKey(kind);
  return { value, keyHash: await digestKey(value), last4: lastFour(value) };
}

/** How many API keys one client may hold. */
export const MAX_KEYS_PER_CLIENT = 25;
