/**
 * Bytes as text: base64 (RFC 4648 section 4), base64url without padding (section 5) and lower-case
 * hex. The one place Salvo turns bytes into text and back (secrets at rest, tokens, signatures,
 * MIME, SASL); `npm run lint` refuses `btoa`/`atob` anywhere else.
 */

type Bytes = Uint8Array | ArrayBuffer;

const view = (bytes: Bytes): Uint8Array => (bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));

declare global {
  // TC39's Uint8Array base64 (in the runtime, not yet in TypeScript's lib): native, and linear on any size.
  // The type parameter repeats lib's, which a merged declaration must.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
    toBase64(options?: { alphabet?: "base64" | "base64url"; omitPadding?: boolean }): string;
  }
}

export function toBase64(bytes: Bytes): string {
  return view(bytes).toBase64();
}

/** null when `text` is not base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

export function toBase64Url(bytes: Bytes): string {
  return view(bytes).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** null when `text` is not unpadded base64url. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  return fromBase64(text.replace(/-/g, "+").replace(/_/g, "/"));
}

/** Text as the base64 of its UTF-8 bytes (SASL PLAIN/LOGIN, RFC 2047 encoded words). */
export function utf8Base64(text: string): string {
  return toBase64(new TextEncoder().encode(text));
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** One byte as two lower-case hex digits. */
export function hexOctet(byte: number): string {
  return HEX[byte & 0xff]!;
}

export function toHex(bytes: Bytes): string {
  let out = "";
  for (const byte of view(bytes)) out += HEX[byte];
  return out;
}

const encoder = new TextEncoder();

/** How many bytes `text` takes in UTF-8 (a lone surrogate counts as U+FFFD's three), without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The longest start of `text` that takes at most `maxBytes` in UTF-8, never splitting a surrogate
 * pair: what is stored of a stranger's text when a column or a D1 row has a size limit.
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  // Each UTF-16 unit takes at most 3 bytes: a text this short fits without counting.
  if (text.length * 3 <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}
