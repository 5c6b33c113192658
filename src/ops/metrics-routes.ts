import { createRoute, z } from "@hono/zod-openapi";
import { adminAuth, adminSecurity } from "../accounts/admin-routes";
import { database } from "../platform/db";
import { createRouter, errorResponses, json } from "../platform/openapi";
import { onEveryShard } from "../platform/shards";
import { readMetrics, sumMetrics, type OperatorMetrics } from "./metrics-store";

const count = z.number().int().min(0);

const Metrics = z
  .object({
    generated_at: z.string().openapi({ description: "When these figures were read" }),
    webhook_deliveries: z.object({
      pending: count.openapi({ description: "Deliveries waiting for an attempt or a retry: the webhook queue's work" }),
      overdue: count.openapi({ description: "Pending deliveries over 2 minutes past their due time (lost queue messages; the minute cron enqueues them again)" }),
      oldest_pending_due_at: z.string().nullable().openapi({ description: "Due time of the longest-waiting pending delivery" }),
    }),
    sends: z.object({
      since: z.string().openapi({ description: "Midnight UTC today" }),
      sent: count.openapi({ description: "Campaign emails sent since then, every account" }),
      unconfirmed: count.openapi({
        description: "Campaign emails in doubt since then, every account: sending stopped during their SMTP transaction (a crash or restart), so they may or may not have gone; never sent twice. Each mailbox's sending_status names its own",
      }),
    }),
    mailboxes: z.object({
      total: count,
      suspended: count.openapi({ description: "Mailboxes that send nothing until unsuspended" }),
      failing: count.openapi({ description: "Mailboxes whose last SMTP or IMAP connection check failed" }),
    }),
    due_jobs: z
      .object({
        snoozes: count.openapi({ description: "Snoozed conversations whose time has come" }),
        scheduled_replies: count.openapi({ description: "Scheduled replies due to be sent" }),
        paused_records: count.openapi({ description: "Records paused by an out-of-office answer, due to resume" }),
        spam_tests: count.openapi({ description: "Automated placement tests due to start a run" }),
        csv_imports: count.openapi({ description: "CSV imports no worker holds, due to carry on" }),
      })
      .openapi({ description: "Work the minute cron takes on its next firings; figures that stay high mean it falls behind" }),
  })
  .openapi("OperatorMetrics");

const getMetrics = createRoute({
  method: "get",
  path: "/admin/metrics",
  operationId: "getOperatorMetrics",
  tags: ["Admin"],
  summary: "Operator summary: pending webhook deliveries, sends today, mailboxes suspended or failing, due cron work",
  description:
    "Every figure is counted in D1 across all accounts when asked; nothing is cached. For monitoring: poll it every few minutes, not every second.",
  security: adminSecurity,
  middleware: [adminAuth] as const,
  responses: { 200: json(Metrics, "The figures as of generated_at"), ...errorResponses(401, 404, 429) },
});

function present(metrics: OperatorMetrics, at: number): z.infer<typeof Metrics> {
  return {
    generated_at: new Date(at).toISOString(),
    webhook_deliveries: {
      pending: metrics.webhookDeliveries.pending,
      overdue: metrics.webhookDeliveries.overdue,
      oldest_pending_due_at: metrics.webhookDeliveries.oldestPendingAt?.toISOString() ?? null,
    },
    sends: { since: metrics.sends.since.toISOString(), sent: metrics.sends.sent, unconfirmed: metrics.sends.unconfirmed },
    mailboxes: metrics.mailboxes,
    due_jobs: {
      snoozes: metrics.dueJobs.snoozes,
      scheduled_replies: metrics.dueJobs.scheduledReplies,
      paused_records: metrics.dueJobs.pausedRecords,
      spam_tests: metrics.dueJobs.spamTests,
      csv_imports: metrics.dueJobs.csvImports,
    },
  };
}

export const metricsRoutes = createRouter();

metricsRoutes.openapi(getMetrics, async (c) => {
  const now = Date.now();
  const parts = await onEveryShard(c.env, (shardEnv) => readMetrics(database(shardEnv.DB), now));
  return c.json(present(sumMetrics(parts), now), 200);
});
