import type { Keyring } from "../platform/crypto";
import { fromBase64Url, toBase64Url } from "../platform/bytes";

/**
 * Signed tokens for the links in an email (open pixel, click redirect, unsubscribe).
 *
 * A token is `<payload>.<mac>`, both base64url: the payload names the kind, record, step, mailbox
 * and send time (and the target URL of a click); the MAC is HMAC-SHA256 over the encoded payload,
 * truncated to 16 bytes, under a key derived (HKDF, info "salvo-tracking") from SECRETS_KEY. The
 * primary key signs; every key of the ring verifies, so rotating SECRETS_KEY keeps the links in
 * mail already sent working while the old key stays in the ring. Nothing in a token can be guessed
 * from another: changing one id breaks the MAC.
 */

export type TrackKind = "open" | "click" | "unsubscribe";

export type TrackPayload = {
  kind: TrackKind;
  recordId: number;
  step: number;
  mailboxId: number | null;
  /** When the email was sent, in ms. */
  sentAt: number;
  /** The link's target: clicks only. */
  url?: string;
};

const MAC_BYTES = 16;
const INFO = new TextEncoder().encode("salvo-tracking");
const KIND_CODES: Record<TrackKind, string> = { open: "o", click: "c", unsubscribe: "u" };
const KINDS_BY_CODE = new Map(Object.entries(KIND_CODES).map(([kind, code]) => [code, kind as TrackKind]));
const ID = /^[0-9a-z]{1,11}$/;

const derived = new WeakMap<Keyring, Promise<Map<string, CryptoKey>>>();

/** The ring's tracking keys, one per kid, derived once per keyring. */
function trackingKeys(keyring: Keyring): Promise<Map<string, CryptoKey>> {
  let keys = derived.get(keyring);
  if (!keys) {
    keys = Promise.all(
      [...keyring.material].map(
        async ([kid, material]) =>
          [
            kid,
            await crypto.subtle.deriveKey(
              { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: INFO },
              material,
              { name: "HMAC", hash: "SHA-256", length: 256 },
              false,
              ["sign"],
            ),
          ] as const,
      ),
    ).then((entries) => new Map(entries));
    derived.set(keyring, keys);
  }
  return keys;
}


async function mac(key: CryptoKey, body: string): Promise<Uint8Array<ArrayBuffer>> {
  const full = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body));
  return new Uint8Array(full, 0, MAC_BYTES);
}

/** Base 36 keeps the ids short; the payload is `kind.record.step.mailbox.sentAt[.url]`. */
function encodePayload(payload: TrackPayload): string {
  const fields = [
    KIND_CODES[payload.kind],
    payload.recordId.toString(36),
    payload.step.toString(36),
    payload.mailboxId === null ? "" : payload.mailboxId.toString(36),
    payload.sentAt.toString(36),
  ];
  if (payload.kind === "click") fields.push(payload.url ?? "");
  return toBase64Url(new TextEncoder().encode(fields.join(".")));
}

function decodePayload(body: string): TrackPayload | null {
  const bytes = fromBase64Url(body);
  if (!bytes) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
  const [code, record, step, mailbox, sentAt, ...rest] = text.split(".");
  const kind = KINDS_BY_CODE.get(code ?? "");
  if (!kind || ![record, step, sentAt].every((field) => field !== undefined && ID.test(field))) return null;
  if (mailbox === undefined || (mailbox !== "" && !ID.test(mailbox))) return null;
  const payload: TrackPayload = {
    kind,
    recordId: parseInt(record!, 36),
    step: parseInt(step!, 36),
    mailboxId: mailbox === "" ? null : parseInt(mailbox, 36),
    sentAt: parseInt(sentAt!, 36),
  };
  if (kind === "click") {
    const url = rest.join(".");
    if (!isWebUrl(url)) return null;
    payload.url = url;
  } else if (rest.length > 0) return null;
  return payload;
}

function isWebUrl(text: string): boolean {
  const protocol = URL.parse(text)?.protocol;
  return protocol === "http:" || protocol === "https:";
}

/** A token for one link of one email; a click must carry its http(s) URL. */
export async function signToken(keyring: Keyring, payload: TrackPayload): Promise<string> {
  const ids = [payload.recordId, payload.step, payload.sentAt, payload.mailboxId ?? 0];
  if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0)) throw new RangeError("tracking ids must be non-negative integers");
  if (payload.kind === "click" && !isWebUrl(payload.url ?? "")) throw new RangeError("a click token needs an http(s) url");
  const body = encodePayload(payload);
  const key = (await trackingKeys(keyring)).get(keyring.current)!;
  return `${body}.${toBase64Url(await mac(key, body))}`;
}

/** The payload of a token signed under any key of the ring; null when forged, altered or malformed. */
export async function verifyToken(keyring: Keyring, token: string): Promise<TrackPayload | null> {
  const [body, given, ...rest] = token.split(".");
  if (!body || !given || rest.length > 0) return null;
  const expected = fromBase64Url(given);
  // Canonical only: base64's spare low bits would otherwise let one MAC be written several ways.
  if (expected?.length !== MAC_BYTES || toBase64Url(expected) !== given) return null;
  let valid = false;
  for (const key of (await trackingKeys(keyring)).values()) {
    if (crypto.subtle.timingSafeEqual(await mac(key, body), expected)) valid = true;
  }
  return valid ? decodePayload(body) : null;
}
