/**
 * Bytes as text: base64 (RFC 4648 section 4), base64url without padding (section 5) and lower-case
 * hex. The one place Salvo turns bytes into text and back (secrets at rest, tokens, signatures,
 * MIME, SASL); `npm run lint` refuses `btoa`/`atob` anywhere else.
 */

type Bytes = Uint8Array | ArrayBuffer;

const view = (bytes: Bytes): Uint8Array => (bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));

/** Chunks keep `String.fromCharCode.apply` under the engine's argument limit on large buffers. */
const CHUNK = 0x8000;

function binaryString(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) parts.push(String.fromCharCode.apply(null, bytes.subarray(at, at + CHUNK) as unknown as number[]));
  return parts.join("");
}

export function toBase64(bytes: Bytes): string {
  return btoa(binaryString(view(bytes)));
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
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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
