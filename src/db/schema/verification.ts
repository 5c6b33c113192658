import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { instant } from "./columns";

/** A domain's DNS verdict for email verification (A-label form), kept 24 h (migration 0055). */
export const emailDomainChecks = sqliteTable("email_domain_checks", {
  domain: text("domain").primaryKey(),
  /** `mx` (mail exchangers), `a` (no MX, an address: the implicit MX), `no_domain`, `no_mx`, `null_mx`. */
  outcome: text("outcome").notNull(),
  mxHosts: text("mx_hosts", { mode: "json" }).$type<string[]>().notNull().default([]),
  checkedAt: instant("checked_at").notNull(),
  expiresAt: instant("expires_at").notNull(),
  /** The domain's provider (CONTRACT 23.3: google, microsoft, other; null = unknown), kept 7 days (migration 0079). */
  provider: text("provider"),
  providerExpiresAt: instant("provider_expires_at"),
});

export const VERIFICATION_JOB_STATES = ["queued", "running", "completed", "failed"] as const;

/** A background verification run (CONTRACT 22): its progress is the row its chunks advance. */
export const verificationJobs = sqliteTable(
  "verification_jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** `vj_…`, the id callers see. */
    publicId: text("public_id").notNull().unique(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    /** `emails` (POST /verify-emails) or `leads` (results stored on the leads too). */
    kind: text("kind", { enum: ["emails", "leads"] }).notNull(),
    state: text("state", { enum: VERIFICATION_JOB_STATES }).notNull().default("queued"),
    total: integer("total").notNull(),
    processed: integer("processed").notNull().default(0),
    valid: integer("valid").notNull().default(0),
    invalid: integer("invalid").notNull().default(0),
    risky: integer("risky").notNull().default(0),
    unknown: integer("unknown").notNull().default(0),
    webhookUrl: text("webhook_url"),
    /** The completion POST: null (none yet), pending, delivered or failed (CONTRACT 5's retries). */
    webhookState: text("webhook_state", { enum: ["pending", "delivered", "failed"] }),
    webhookAttempts: integer("webhook_attempts").notNull().default(0),
    webhookNextAt: instant("webhook_next_at"),
    error: text("error"),
    failedPasses: integer("failed_passes").notNull().default(0),
    leaseUntil: instant("lease_until"),
    finishedAt: instant("finished_at"),
    createdAt: instant("created_at").notNull(),
    updatedAt: instant("updated_at").notNull(),
  },
  (t) => [index("verification_jobs_pending_idx").on(t.state, t.leaseUntil), index("verification_jobs_webhook_idx").on(t.webhookState, t.webhookNextAt)],
);

/** A job's addresses in order, each with its lead (lead jobs) and, once checked, its Result. */
export const verificationJobItems = sqliteTable(
  "verification_job_items",
  {
    jobId: integer("job_id")
      .notNull()
      .references(() => verificationJobs.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    email: text("email").notNull(),
    leadId: integer("lead_id"),
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.position] })],
);
