/**
 * Verification while leads are added (CONTRACT 22): `verify_emails` `off` (default), `flag` (added,
 * then verified in the background) or `skip` (DNS checks in the request; invalid addresses, and risky
 * ones with `skip_risky`, are not added). The routes that add leads call these.
 */
import { sql } from "drizzle-orm";
import { config } from "../config";
import type { Scope } from "../platform/access";
import type { Bindings } from "../platform/env";
import { jsonList } from "../platform/sql";
import { verifierSettings, verifyAddresses } from "./check";
import { runVerificationJob } from "./jobs";
import type { VerificationResult } from "./rules";
import { createLeadJob } from "./store";

export const VERIFY_MODES = ["off", "flag", "skip"] as const;
export type VerifyMode = (typeof VERIFY_MODES)[number];

export interface Screened {
  /** Addresses not to add (invalid, or risky with skip_risky). */
  refused: Set<string>;
  /** Every address's result, to store on the leads that are added. */
  results: VerificationResult[];
}

/** `skip`: the addresses' DNS and list checks, now (never the external verifier: it is slow and billed per address). */
export async function screenAddresses(env: Bindings, emails: string[], skipRisky: boolean): Promise<Screened> {
  const results = await verifyAddresses(env.DB, verifierSettings(config(env)), emails, Date.now(), { external: false });
  const refused = new Set(results.filter((r) => r.status === "invalid" || (skipRisky && r.status === "risky")).map((r) => r.email));
  return { refused, results };
}

/** `flag`: a background job over the scope's leads with these addresses (those never verified, or not in 30 days). */
export async function flagForVerification(env: Bindings, waitUntil: (work: Promise<unknown>) => void, scope: Scope, emails: string[]): Promise<string | null> {
  if (emails.length === 0) return null;
  const now = Date.now();
  const selection = sql`SELECT id FROM leads WHERE account_id = ${scope.accountId} AND coalesce(client_id, 0) = ${scope.clientId ?? 0}
                        AND email IN (SELECT value FROM json_each(${jsonList(emails)}))`;
  const { publicId, total } = await createLeadJob(env.DB, scope, selection, now - 30 * 86_400_000, now);
  if (total > 0) {
    const row = await env.DB.prepare("SELECT id FROM verification_jobs WHERE public_id = ?").bind(publicId).first<{ id: number }>();
    if (row) waitUntil(runVerificationJob(env, row.id));
  }
  return publicId;
}
