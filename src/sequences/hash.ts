/**
 * A stable hash for per-record choices (spintax option, variant, follow-up share). It must give the
 * same answer in every isolate, after every deploy and on every retry, so it is a fixed function of
 * its input string, never random: FNV-1a over the UTF-16 code units, then murmur3's 32-bit finaliser,
 * because FNV alone spreads consecutive ids (record 1, 2, 3…) poorly across the high bits that a
 * fraction depends on.
 */
export function stableHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash as a fraction in [0, 1), for weighted choices. */
export function stableFraction(key: string): number {
  return stableHash(key) / 2 ** 32;
}
