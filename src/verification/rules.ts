/**
 * Email verification's pure rules (CONTRACT 22): an address's verdict from its spelling, its
 * domain's DNS verdict and, when configured, the external verifier's answer. No I/O here.
 */
import { needsSmtpUtf8, normaliseEmail, smtpAddress } from "../mail/address";
import type { VerificationStatus } from "../db/schema";
import { providerOfDomain, type Provider } from "../esp/rules";
import { isDisposableDomain, isRoleLocalPart } from "./lists";

export const REASONS = {
  syntax: ["invalid", "The address is not a valid RFC 5321 address (or is longer than 254 characters)"],
  no_domain: ["invalid", "The domain does not exist (NXDOMAIN)"],
  no_mx: ["invalid", "The domain has no MX record and no address to receive mail"],
  null_mx: ["invalid", "The domain publishes a null MX (RFC 7505): it accepts no mail"],
  undeliverable: ["invalid", "The external verifier says the mailbox does not exist"],
  hard_bounce: ["invalid", "A message Salvo sent to this address bounced permanently"],
  disposable: ["risky", "The domain belongs to a disposable-mail service"],
  role: ["risky", "The address names a role (info@, sales@, support@, …), not a person"],
  catch_all: ["risky", "The domain accepts every address (catch-all), so the mailbox cannot be confirmed"],
  smtputf8: ["risky", "The local part is not ASCII: only servers supporting SMTPUTF8 accept it"],
  dns_error: ["unknown", "The domain's DNS could not be read (resolver error, timeout, or no resolver configured)"],
  external_unknown: ["unknown", "The external verifier could not tell"],
  mx_ok: ["valid", "The domain accepts mail (DNS only; the mailbox itself was not checked)"],
  deliverable: ["valid", "The external verifier confirmed the mailbox"],
} as const satisfies Record<string, readonly [VerificationStatus, string]>;
export type ReasonCode = keyof typeof REASONS;

/** Verdicts on the mailbox itself (the external verifier's, or a bounce of Salvo's own mail): DNS alone cannot gainsay them. */
export const MAILBOX_REASONS: readonly ReasonCode[] = ["undeliverable", "deliverable", "catch_all", "external_unknown", "hard_bounce"];

/** What DNS says about a domain: mail exchangers, only an address (the implicit MX), or why not. */
export type DomainOutcome = "mx" | "a" | "no_domain" | "no_mx" | "null_mx" | "dns_error";
export interface DomainVerdict {
  outcome: DomainOutcome;
  mxHosts: string[];
}

/** The external verifier's answer for one address (CONTRACT 22's wire shape). */
export interface ExternalAnswer {
  result: "deliverable" | "undeliverable" | "risky" | "unknown";
  catch_all: boolean | null;
  /** The call failed or left the address out: counted as "unknown", and the mailbox as not checked. */
  unanswered?: boolean;
}

/** CONTRACT 22's Result. */
export interface VerificationResult {
  email: string;
  status: VerificationStatus;
  reason: ReasonCode;
  reason_text: string;
  is_disposable: boolean;
  is_role_account: boolean;
  mx_found: boolean;
  is_catch_all: boolean | null;
  mailbox_checked: boolean;
  domain: string | null;
  ascii_domain: string | null;
  provider: Provider | null;
  checked_at: string;
}

/** An address taken apart: its normalised form, and (when its spelling is valid) its parts. */
export interface ParsedAddress {
  email: string;
  valid: boolean;
  localPart: string;
  domain: string | null;
  asciiDomain: string | null;
}

export function parseAddress(input: string): ParsedAddress {
  const email = normaliseEmail(input);
  const at = email.lastIndexOf("@");
  const domain = at > 0 ? email.slice(at + 1) : null;
  const wire = smtpAddress(email);
  if (wire === null) return { email, valid: false, localPart: at > 0 ? email.slice(0, at) : email, domain, asciiDomain: null };
  return { email, valid: true, localPart: email.slice(0, at), domain, asciiDomain: wire.slice(wire.lastIndexOf("@") + 1) };
}

/**
 * A domain's provider from its DNS verdict through the one provider rule (src/esp/rules.ts): its MX
 * hosts, or the domain itself when it only has an address (RFC 5321's implicit MX); null when DNS
 * could not tell or the domain takes no mail.
 */
export function domainProvider(asciiDomain: string, verdict: DomainVerdict): Provider | null {
  return providerOfDomain(asciiDomain, verdict.outcome === "a" ? [asciiDomain] : verdict.mxHosts);
}

/**
 * The verdict, first match wins: invalid spelling or DNS, the verifier's "undeliverable"; then DNS
 * unknown (unless the verifier answered); then the risky marks (disposable, role, catch-all, SMTPUTF8),
 * the verifier's "unknown", and valid.
 */
export function classify(parsed: ParsedAddress, verdict: DomainVerdict | null, external: ExternalAnswer | null, checkedAt: Date): VerificationResult {
  const asciiDomain = parsed.asciiDomain;
  const isDisposable = asciiDomain !== null && isDisposableDomain(asciiDomain);
  const isRole = parsed.valid && isRoleLocalPart(parsed.localPart);
  const result = (reason: ReasonCode): VerificationResult => ({
    email: parsed.email,
    status: REASONS[reason][0],
    reason,
    reason_text: REASONS[reason][1],
    is_disposable: isDisposable,
    is_role_account: isRole,
    mx_found: verdict?.outcome === "mx",
    is_catch_all: external?.catch_all ?? null,
    mailbox_checked: external !== null && !external.unanswered,
    domain: parsed.domain,
    ascii_domain: asciiDomain,
    provider: asciiDomain !== null && verdict !== null ? domainProvider(asciiDomain, verdict) : null,
    checked_at: checkedAt.toISOString(),
  });
  if (!parsed.valid || verdict === null) return result("syntax");
  if (verdict.outcome === "no_domain" || verdict.outcome === "no_mx" || verdict.outcome === "null_mx") return result(verdict.outcome);
  if (external?.result === "undeliverable") return result("undeliverable");
  if (verdict.outcome === "dns_error" && (external === null || external.result === "unknown")) return result("dns_error");
  if (isDisposable) return result("disposable");
  if (isRole) return result("role");
  if (external?.catch_all || external?.result === "risky") return result("catch_all");
  if (needsSmtpUtf8(parsed.email)) return result("smtputf8");
  if (external?.result === "unknown") return result("external_unknown");
  return result(external?.result === "deliverable" ? "deliverable" : "mx_ok");
}
