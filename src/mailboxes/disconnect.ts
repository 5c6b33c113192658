/**
 * Why a mailbox is disconnected, in words a person can act on (CONTRACT 18.5): a refused refresh of
 * its OAuth grant, or a mail server refusing its login. A disconnected mailbox sends and reads
 * nothing until a reconnect, new credentials or a passing check.
 */
import type { OAuthProvider } from "../config";

type DisconnectCode =
  | "oauth_grant_revoked"
  | "oauth_app_invalid"
  | "oauth_scope_missing"
  | "smtp_auth_disabled"
  | "imap_disabled"
  | "app_password_required"
  | "auth_rejected";

export interface DisconnectReason {
  code: DisconnectCode;
  message: string;
}

/** A disconnect of the OAuth grant itself (revoked, its app refused, its scope missing): no token comes until a person reconnects. */
export function grantGone(code: string): boolean {
  return code === "oauth_grant_revoked" || code === "oauth_app_invalid" || code === "oauth_scope_missing";
}

const TESTING_GRANT_MIN_MS = 6.5 * 86_400_000;
const TESTING_GRANT_MAX_MS = 7.5 * 86_400_000;

const PERSON_REFUSALS = ["invalid_grant", "invalid_client", "unauthorized_client"] as const;
type PersonRefusal = (typeof PERSON_REFUSALS)[number];

/**
 * Whether a refused refresh needs a person (CONTRACT 18.5's table): a revoked or expired grant, or an
 * app the provider no longer accepts. Any other error (a throttled `temporarily_unavailable`, an
 * `invalid_request`) is a passing fault, retried with the mailbox left connected.
 */
export function needsPerson(error: string): error is PersonRefusal {
  return (PERSON_REFUSALS as readonly string[]).includes(error);
}

/** Why a refresh was refused: a revoked or expired grant, or an app the provider no longer accepts. */
export function refreshRefusal(provider: OAuthProvider, error: PersonRefusal, description: string | null, grantAgeMs: number | null): DisconnectReason {
  if (error === "invalid_client" || error === "unauthorized_client") {
    return { code: "oauth_app_invalid", message: `The provider refused the OAuth app (${error}${description ? `: ${description}` : ""}): fix the app (PUT /email-accounts/oauth/${provider}/app or the deployment's settings), then reconnect` };
  }
  const testing =
    provider === "google" && grantAgeMs !== null && grantAgeMs >= TESTING_GRANT_MIN_MS && grantAgeMs <= TESTING_GRANT_MAX_MS
      ? ' The grant died about 7 days after consent: the Google app is probably in "Testing" (its refresh tokens expire after 7 days); publish it or make it Internal, then reconnect.'
      : "";
  return { code: "oauth_grant_revoked", message: `The provider says the consent was revoked or expired (${error}${description ? `: ${description}` : ""}): reconnect the mailbox.${testing}` };
}

/**
 * A mail server's refusal of a login, in plain words (CONTRACT 18.5's table). `oauth`: whether the
 * login was XOAUTH2/OAUTHBEARER (Google's app-password answer means something only to a password).
 */
export function loginRefusal(service: "smtp" | "imap", serverText: string, oauth: boolean): DisconnectReason {
  if (/5\.7\.139|SmtpClientAuthentication is disabled/i.test(serverText)) {
    return {
      code: "smtp_auth_disabled",
      message:
        "SMTP AUTH is turned off for this Microsoft 365 tenant or mailbox. An Exchange admin enables it for the mailbox (admin center → Users → Active users → the user → Mail → Manage email apps → Authenticated SMTP, or `Set-CASMailbox -Identity <address> -SmtpClientAuthenticationDisabled $false`; tenant-wide `Set-TransportConfig -SmtpClientAuthenticationDisabled $false`; security defaults keep it off), then calls POST /email-accounts/reconnect-failed-email-accounts. The server said: " +
        serverText,
    };
  }
  if (service === "imap" && /IMAP (access )?is disabled|IMAP.*not enabled|enable IMAP/i.test(serverText)) {
    return { code: "imap_disabled", message: `IMAP is turned off for this mailbox: enable it (Gmail settings → Forwarding and POP/IMAP; Microsoft 365: Set-CASMailbox -ImapEnabled $true). The server said: ${serverText}` };
  }
  if (!oauth && /5\.7\.9|Application-specific password required/i.test(serverText)) {
    return { code: "app_password_required", message: `Google requires an app password for this account: use an app password, or connect the mailbox through OAuth. The server said: ${serverText}` };
  }
  return { code: "auth_rejected", message: serverText };
}
