/**
 * The SASL mechanisms a mailbox logs in with (CONTRACT 18): a password through PLAIN or LOGIN, an
 * OAuth access token through XOAUTH2 (Google's and Microsoft's) or OAUTHBEARER (RFC 7628), the
 * latter only where XOAUTH2 is not offered. Shared by the SMTP and IMAP clients, which frame and
 * encode the messages built here.
 */

/** What a mailbox logs in with: its password, or an OAuth access token held by its agent. */
export type MailCredential = { password: string; accessToken?: undefined } | { accessToken: string; password?: undefined };

export type OAuthMechanism = "XOAUTH2" | "OAUTHBEARER";

/** XOAUTH2 when offered, else OAUTHBEARER, else none (`offered`: the server's names, upper-cased). */
export function oauthMechanism(offered: readonly string[]): OAuthMechanism | null {
  if (offered.includes("XOAUTH2")) return "XOAUTH2";
  if (offered.includes("OAUTHBEARER")) return "OAUTHBEARER";
  return null;
}

/** The initial client response of an OAuth mechanism, before base64. */
export function oauthInitialResponse(mechanism: OAuthMechanism, username: string, accessToken: string, server: { host: string; port: number }): string {
  if (mechanism === "XOAUTH2") return `user=${username}\x01auth=Bearer ${accessToken}\x01\x01`;
  // RFC 7628 3.1: a GS2 header naming the user (`,` and `=` escaped per RFC 5801), then key/value pairs.
  const authzid = username.replace(/=/g, "=3D").replace(/,/g, "=2C");
  return `n,a=${authzid},\x01host=${server.host}\x01port=${server.port}\x01auth=Bearer ${accessToken}\x01\x01`;
}

/**
 * The client's answer to an error challenge: after a refused token the server sends a challenge
 * (a JSON status) and waits; XOAUTH2 expects an empty line, OAUTHBEARER a single %x01 (RFC 7628 3.2.3).
 */
export function oauthErrorAcknowledgement(mechanism: OAuthMechanism): string {
  return mechanism === "XOAUTH2" ? "" : "\x01";
}

/** The `status` of an OAuth error challenge (`{"status":"401",...}`), for the failure's words; null when it is not one. */
export function oauthChallengeStatus(decoded: string): string | null {
  try {
    const parsed = JSON.parse(decoded) as { status?: unknown };
    return typeof parsed.status === "string" ? parsed.status : null;
  } catch {
    return null;
  }
}
