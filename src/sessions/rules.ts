/**
 * Web app sessions, the pure part: lifetimes, the cookie, and whether a request comes from the app's
 * own pages (the only place a session cookie counts as a credential).
 */
import { tagWithShard } from "../platform/shards";
import { toBase64Url, toHex } from "../platform/bytes";

/** A session ends after this long unused... */
export const IDLE_MS = 12 * 60 * 60 * 1000;
/** ...and this long after sign-in, however busy. */
export const ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at (and the sliding expiry) is written at most this often per session. */
export const TOUCH_EVERY_MS = 60 * 1000;

const SECURE_COOKIE = "__Host-salvo_session";
const LOOPBACK_COOKIE = "salvo_session";

/** When a session used at `now` expires: idle time from now, never past the absolute lifetime. */
export function slidingExpiry(createdAt: number, now: number): number {
  return Math.min(now + IDLE_MS, createdAt + ABSOLUTE_MS);
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * Secure everywhere except plain http on loopback (`npm run dev`), where a browser would drop a
 * Secure cookie set over http. The secure form carries the `__Host-` prefix (host-only, path /).
 */
function cookieForm(url: URL): { name: string; secure: boolean } {
  const insecureLoopback = url.protocol === "http:" && isLoopback(url.hostname);
  return insecureLoopback ? { name: LOOPBACK_COOKIE, secure: false } : { name: SECURE_COOKIE, secure: true };
}

export function sessionCookie(url: URL, token: string, maxAgeSeconds: number): string {
  const { name, secure } = cookieForm(url);
  return `${name}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(url: URL): string {
  return sessionCookie(url, "", 0);
}

/** The session token a Cookie header carries under this origin's cookie name. */
export function tokenFromCookies(url: URL, cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const { name } = cookieForm(url);
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^(?:s\d{1,4}\.)?[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/**
 * A request the app's own pages made: the browser says so (`Sec-Fetch-Site: same-origin`), and an
 * `Origin` it sends is this origin. A request with neither header is not a page's (a script or another
 * tool holding a copied cookie), so a cookie alone is never enough from anywhere else.
 */
export function fromOwnPages(url: URL, headers: { secFetchSite?: string; origin?: string }): boolean {
  if (headers.origin !== undefined && headers.origin !== url.origin) return false;
  if (headers.secFetchSite !== undefined) return headers.secFetchSite === "same-origin";
  return headers.origin === url.origin;
}

/** A fresh session token: 32 random bytes, base64url (43 characters), tagged with its row's shard. */
export function newToken(shard: number): string {
  return tagWithShard(shard, toBase64Url(crypto.getRandomValues(new Uint8Array(32))));
}

export async function digestToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`session:${token}`));
  return toHex(digest);
}

/** A short, recognisable description of a browser for the sessions list. */
export function userAgentLabel(userAgent: string | undefined): string | null {
  const text = userAgent?.trim();
  return text ? text.slice(0, 200) : null;
}
