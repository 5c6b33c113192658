/**
 * Email addresses: the one rule for every address Salvo takes as a lead (add, import, CSV, lead updates,
 * event lookups) and for every recipient it sends to (the SMTP and MIME layers check it again).
 *
 * RFC 5321's mailbox as senders really use it:
 * - local part: a dot-atom (letters, digits and ``!#$%&'*+/=?^_`{|}~-``, dots only between them), at most
 *   64 octets. Quoted local parts (`"a b"@x`) are refused: nobody sends to them, and they are how spaces,
 *   `<>(),;:"` and controls get into an address. Non-ASCII characters are allowed (RFC 6531), except
 *   controls, format characters and separators; CONTRACT 22 flags such an address "risky smtputf8".
 * - domain: host names only (no address literal, no all-numeric top label), each label letters, digits
 *   and inner hyphens, 1-63 octets, at least two labels. An international domain may be written in
 *   U-labels; it is checked, and sent, as its A-labels (UTS 46 through the URL parser).
 * - at most 254 octets as sent (RFC 5321's 256-octet path less the angle brackets).
 */
import { z } from "@hono/zod-openapi";

const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-";
/** Any non-ASCII character but controls, format, private-use, unassigned and surrogates (\p{C}) and separators (\p{Z}). */
const UTEXT = "[^\\x00-\\x7f\\p{C}\\p{Z}]";
const LOCAL_PART = new RegExp(`^(?:[${ATEXT}]|${UTEXT})+(?:\\.(?:[${ATEXT}]|${UTEXT})+)*$`, "u");
/** The same rule for an ASCII local part (most of them), without the Unicode classes: every recipient of every send passes here. */
const ASCII_LOCAL_PART = new RegExp(`^[${ATEXT}]+(?:\\.[${ATEXT}]+)*$`);
/** What a domain may hold before conversion: ASCII letters, digits, dots and hyphens, or such non-ASCII characters. */
const DOMAIN_INPUT = new RegExp(`^(?:[A-Za-z0-9.\\-]|${UTEXT})+$`, "u");
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_LOCAL_OCTETS = 64;
const MAX_DOMAIN_OCTETS = 253;
const MAX_ADDRESS_OCTETS = 254;

const encoder = new TextEncoder();

export function normaliseEmail(email: string): string {
  return email.trim().normalize("NFC").toLowerCase();
}

/**
 * Lower-case letters, digits, hyphens and dots, no A-label, a top label starting with a letter: the
 * URL parser would hand it back unchanged (no mapping, no IPv4 reading), so it is not asked. Every
 * recipient of every send passes here; most are such names.
 */
const PLAIN_HOST = /^[a-z0-9.-]*\.[a-z][a-z0-9-]*$/;

/** The domain as A-labels, or null when it is no host name a mailbox can have. */
function asciiDomain(domain: string): string | null {
  let host: string;
  if (PLAIN_HOST.test(domain) && !domain.includes("xn--")) host = domain;
  else {
    if (!DOMAIN_INPUT.test(domain)) return null;
    try {
      host = new URL(`http://${domain}/`).hostname;
    } catch {
      return null;
    }
  }
  if (host.length > MAX_DOMAIN_OCTETS) return null;
  const labels = host.split(".");
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^[0-9]+$/.test(labels.at(-1)!)) return null;
  return host;
}

/**
 * The address as it goes on the wire (domain in A-labels, local part as written), or null when it breaks
 * the rule. Every recipient passes through this before `RCPT TO` and into a header.
 */
export function smtpAddress(email: string): string | null {
  const at = email.lastIndexOf("@");
  if (at <= 0) return null;
  const local = email.slice(0, at);
  const ascii = ASCII_LOCAL_PART.test(local);
  if (!ascii && !LOCAL_PART.test(local)) return null;
  const localOctets = ascii ? local.length : encoder.encode(local).length;
  if (localOctets > MAX_LOCAL_OCTETS) return null;
  const domain = asciiDomain(email.slice(at + 1));
  if (domain === null) return null;
  // The domain is ASCII by now (A-labels): one octet a character.
  return localOctets + 1 + domain.length <= MAX_ADDRESS_OCTETS ? `${local}@${domain}` : null;
}

export function isValidEmail(email: string): boolean {
  return smtpAddress(email) !== null;
}

/** A non-ASCII local part can only be sent with SMTPUTF8 (RFC 6531). */
export function needsSmtpUtf8(email: string): boolean {
  return /[^ -~]/.test(email.slice(0, email.lastIndexOf("@")));
}

/** A recipient's address in a request, held to the rule (as written, trimmed); the document still says `format: email`. */
export function emailAddress() {
  return z
    .string()
    .trim()
    .max(320)
    .refine((value) => isValidEmail(normaliseEmail(value)), "Invalid email address")
    .openapi({ format: "email" });
}
