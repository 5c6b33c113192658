import { z } from "@hono/zod-openapi";
import type { spamProviders, spamTestFolders, spamTests } from "../db/schema";
import { iso } from "../platform/time";

/** What every deliverability route says about who may use it (the reference's words). */
export const DELIVERABILITY =
  "Deliverability routes answer 404 `Deliverability testing is not enabled for this account` when the account does not have it. " +
  "Hosted on the delivery host ({delivery_url}); in Salvo every host is the same origin.";

export type SpamTestRow = typeof spamTests.$inferSelect;
export type FolderRow = typeof spamTestFolders.$inferSelect;
export type ProviderRow = typeof spamProviders.$inferSelect;

/** The placement counts every report gives, per provider, group, sender or run. */
export const placementCounts = {
  inbox_count: z.number().int(),
  tab_count: z.number().int(),
  spam_count: z.number().int(),
  not_received_count: z.number().int(),
};

export const TEST_NOT_FOUND = "Spam test not found";
export const FOLDER_NOT_FOUND = "Folder not found";
export const FOLDER_OF_ANOTHER_CLIENT = "Folder belongs to another client than the test's campaign";

/** Spam test ids travel as decimal strings; anything else names no test. */
export const SpamTestParams = z.object({
  spamTestId: z.string().openapi({ param: { name: "spamTestId", in: "path" }, example: "12" }),
});

export function parseTestId(value: string | number): number | null {
  const text = String(value);
  return /^\d{1,15}$/.test(text) ? Number(text) : null;
}

const idText = (value: number | null) => (value === null ? null : String(value));
const time = (value: Date | null) => (value === null ? null : iso(value));

/** The fields the creation answers carry (the scheduled ones only for automated tests). */
export function presentCreated(row: SpamTestRow) {
  return {
    id: String(row.id),
    test_name: row.testName,
    description: row.description ?? "",
    test_type: row.testType,
    spam_filters: row.spamFilters,
    link_checker: row.linkChecker,
    campaign_id: String(row.campaignId),
    sequence_mapping_id: row.sequenceMappingId,
    all_email_sent_without_time_gap: row.allEmailSentWithoutTimeGap,
    min_time_btwn_emails: row.minTimeBtwnEmails,
    min_time_unit: row.minTimeUnit,
    is_warmup: row.isWarmup,
    test_with_sl_account: false,
    has_seed_mapping: true,
    status: row.status,
    user_id: String(row.accountId),
    email_track_id: row.emailTrackId,
    provider_id: row.providerIds.join(","),
    ...(row.testType === "automated" && {
      schedule_start_time: time(row.scheduleStartTime),
      test_end_date: time(row.testEndDate),
      every_days: row.everyDays,
      scheduler_cron_value: row.schedulerCronValue,
    }),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Exactly the single-test read's fields. */
export function presentSingle(row: SpamTestRow) {
  return {
    id: String(row.id),
    test_name: row.testName,
    test_type: row.testType,
    description: row.description ?? "",
    folder_id: idText(row.folderId),
    link_checker: row.linkChecker,
    test_with_sl_account: false,
    campaign_id: String(row.campaignId),
    sequence_mapping_id: row.sequenceMappingId,
    provider_id: row.providerIds.join(","),
    client_id: idText(row.clientId),
    user_id: String(row.accountId),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export const CreatedSpamTest = z
  .object({
    id: z.string(),
    test_name: z.string(),
    description: z.string(),
    test_type: z.enum(["manual", "automated"]),
    spam_filters: z.boolean(),
    link_checker: z.boolean(),
    campaign_id: z.string(),
    sequence_mapping_id: z.string(),
    all_email_sent_without_time_gap: z.boolean(),
    min_time_btwn_emails: z.number().int(),
    min_time_unit: z.string(),
    is_warmup: z.boolean(),
    test_with_sl_account: z.boolean(),
    has_seed_mapping: z.boolean(),
    status: z.string(),
    user_id: z.string(),
    email_track_id: z.string(),
    provider_id: z.string(),
    schedule_start_time: z.string().nullable().optional(),
    test_end_date: z.string().nullable().optional(),
    every_days: z.number().int().nullable().optional(),
    scheduler_cron_value: z.string().nullable().optional(),
    created_at: z.string(),
    updated_at: z.string(),
    seed_emails: z.array(z.object({ provider_id: z.string(), email: z.string() })),
  })
  .openapi("SpamTest");

export const SingleSpamTest = z
  .object({
    id: z.string(),
    test_name: z.string(),
    test_type: z.enum(["manual", "automated"]),
    description: z.string(),
    folder_id: z.string().nullable(),
    link_checker: z.boolean(),
    test_with_sl_account: z.boolean(),
    campaign_id: z.string(),
    sequence_mapping_id: z.string(),
    provider_id: z.string(),
    client_id: z.string().nullable(),
    user_id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("SpamTestRead");
