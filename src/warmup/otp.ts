/**
 * Unblocking warmup with a one-time code (CONTRACT 19.4, the hosted OTP pair): the mailbox mails a
 * 6-digit code to its own address (valid 10 minutes, single use, 5 tries); the right code unblocks
 * warmup and turns it on. Only the code's SHA-256 is stored; its email is kept out of every record.
 */
import { eq, sql } from "drizzle-orm";
import { emailAccounts, warmupOtps } from "../db/schema";
import type { Bindings } from "../platform/env";
import { database, type Database } from "../platform/db";
import { hexOctet } from "../platform/bytes";
import { rawBatch } from "../platform/sql";
import type { WarmupDoor } from "./send";

export const OTP_TTL_MS = 10 * 60_000;
export const OTP_TRIES = 5;

/** A 6-digit code, uniformly drawn. */
export function newOtp(): string {
  const [value] = crypto.getRandomValues(new Uint32Array(1));
  return String(value! % 1_000_000).padStart(6, "0");
}

export async function otpDigest(mailboxId: number, code: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`warmup-otp:${mailboxId}:${code}`)));
  return [...bytes].map(hexOctet).join("");
}

/** Mails the code to the mailbox's own address from the mailbox; the server's words when it refuses. */
export async function sendOtpEmail(env: Bindings, door: WarmupDoor, mailboxId: number, code: string, now: number): Promise<{ ok: true } | { ok: false; message: string }> {
  const db = database(env.DB);
  const mailbox = await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailboxId)).get();
  if (!mailbox) return { ok: false, message: "Email account not found" };
  // Its server refused the mailbox's sending for now: the code's email does not knock before the next try either.
  const held = door.held(mailbox, now);
  if (held !== null) return { ok: false, message: held.message };
  const login = await door.smtp(mailbox, now);
  if (!login) return { ok: false, message: "The mailbox cannot log in to its SMTP server" };
  const messageId = `<wu-otp.${crypto.randomUUID()}@${mailbox.fromEmail.split("@")[1] ?? "salvo.invalid"}>`;
  await db
    .insert(warmupOtps)
    .values({ emailAccountId: mailbox.id, codeDigest: await otpDigest(mailbox.id, code), expiresAt: new Date(now + OTP_TTL_MS), tries: 0, messageId })
    .onConflictDoUpdate({ target: warmupOtps.emailAccountId, set: { codeDigest: await otpDigest(mailbox.id, code), expiresAt: new Date(now + OTP_TTL_MS), tries: 0, messageId } });
  const text = `Your code to unblock warmup for ${mailbox.fromEmail} is ${code}. It is valid for 10 minutes.`;
  const result = await login.session
    .send({ from: { email: mailbox.fromEmail, name: mailbox.fromName }, to: { email: mailbox.fromEmail, name: mailbox.fromName }, subject: "Your warmup unblock code", text, headers: { "Message-ID": messageId } })
    .finally(() => login.session.close());
  if (result.ok) return { ok: true };
  // No code left that was never sent; a refusal for now holds the mailbox, as any of its sends would.
  const hold = login.hold(result.failure);
  await rawBatch(env.DB, [sql`DELETE FROM warmup_otps WHERE email_account_id = ${mailbox.id}`, ...(hold ? [hold.statement] : [])]);
  if (result.failure.kind === "auth_failed") await login.refused(result.failure.text);
  // The reply's text is its lines as the server wrote them, code included.
  return { ok: false, message: result.failure.text };
}

export type OtpCheck = "unblocked" | "wrong" | "none";

/** Checks a code: right unblocks and turns warmup on (the code is used up), wrong spends a try; none valid when expired, used or out of tries. */
export async function verifyOtp(db: Database, mailboxId: number, code: string, now: number): Promise<OtpCheck> {
  const row = await db.select().from(warmupOtps).where(eq(warmupOtps.emailAccountId, mailboxId)).get();
  if (!row || row.expiresAt.getTime() <= now || row.tries >= OTP_TRIES) return "none";
  if (row.codeDigest !== (await otpDigest(mailboxId, code.trim()))) {
    await db.update(warmupOtps).set({ tries: row.tries + 1 }).where(eq(warmupOtps.emailAccountId, mailboxId));
    return "wrong";
  }
  await db.batch([
    // Used up, but its Message-ID stays known to the reader.
    db.update(warmupOtps).set({ tries: OTP_TRIES, expiresAt: new Date(now) }).where(eq(warmupOtps.emailAccountId, mailboxId)),
    db.update(emailAccounts).set({ warmupBlockedReason: null, warmupUnblockedAt: new Date(now), warmupEnabled: true, updatedAt: new Date(now) }).where(eq(emailAccounts.id, mailboxId)),
  ]);
  return "unblocked";
}
