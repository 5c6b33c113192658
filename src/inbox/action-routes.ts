import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { categoryDeliveries } from "../webhooks/fanout";
import { enqueue } from "../webhooks/outbox";
import { changeRecord, ignoreReplyByHand, loadCategoryChange, setCategory, type RecordChange } from "./store";
import { findCampaignRecord } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import type { AppEnv } from "../env";
import type { Context } from "hono";
import { EmailLeadMapId } from "./schemas";

const Ok = z.object({ ok: z.boolean() });

function action<T extends z.ZodRawShape>(method: "post" | "patch", path: string, summary: string, fields: T) {
  return createRoute({
    method,
    path: `/api/v1/master-inbox/${path}`,
    tags: ["Master inbox"],
    summary,
    security: API_KEY_SECURITY,
    request: { body: jsonBody(z.object({ email_lead_map_id: EmailLeadMapId, ...fields })) },
    responses: { 200: json(Ok, "Done"), ...errorResponses(401, 404, 422, 429) },
  });
}

const futureInstant = z.iso
  .datetime({ offset: true })
  .refine((value) => Date.parse(value) > Date.now(), "snoozed_until must be in the future");

const routes = {
  readStatus: action("patch", "change-read-status", "Mark a conversation read or unread", { read_status: z.boolean() }),
  category: action("patch", "update-category", "Categorise a lead (null clears)", {
    category_id: z.number().int().positive().nullable(),
  }),
  teamMember: action("post", "update-team-member", "Assign a team member (null clears)", {
    team_member_id: z.number().int().positive().nullable(),
  }),
  snooze: action("post", "snooze", "Snooze a conversation until a future time", { snoozed_until: futureInstant }),
  unsnooze: action("post", "unsnooze", "Bring a snoozed conversation back to the inbox", {}),
  archive: action("post", "archive", "Archive a conversation", {}),
  unarchive: action("post", "unarchive", "Bring an archived conversation back to the inbox", {}),
  ignoreReply: action("post", "ignore-reply", "Flag one reply as ignored (excluded from reply_count)", {
    stats_id: z.union([z.string().regex(/^\d+$/), z.number().int().positive()]).transform(Number),
  }),
};

/** Loads the caller's record (404 otherwise) and applies one change to it. */
async function updateRecord(c: Context<AppEnv>, emailLeadMapId: number, change: RecordChange) {
  const db = database(c.env.DB);
  const record = await findCampaignRecord(db, c.get("principal"), emailLeadMapId);
  await changeRecord(db, record.id, change);
  return record;
}

export const actionRoutes = createRouter();

actionRoutes.openapi(routes.readStatus, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body.email_lead_map_id, { isRead: body.read_status });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.category, async (c) => {
  const { email_lead_map_id, category_id } = c.req.valid("json");
  const principal = c.get("principal");
  const { record, category, webhooks } = await loadCategoryChange(database(c.env.DB), principal, email_lead_map_id, category_id);
  if (category_id !== null && !category) throw ApiError.validation([{ path: "category_id", message: "Unknown lead category" }]);
  if (record.categoryId === category_id) return c.json({ ok: true }, 200);
  const now = Date.now();
  const deliveries = categoryDeliveries(webhooks, record.campaign, {
    recordId: record.id,
    leadId: record.leadId,
    leadEmail: record.leadEmail,
    oldCategoryId: record.categoryId,
    newCategoryId: category_id,
    newCategoryName: category?.name ?? null,
    occurredAt: now,
  });
  await enqueue(c.env, await setCategory(c.env.DB, record.id, category_id, deliveries, now));
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.teamMember, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body.email_lead_map_id, { teamMemberId: body.team_member_id });
  return c.json({ ok: true }, 200);
});

// Archived and snoozed are exclusive states: entering one leaves the other.
actionRoutes.openapi(routes.snooze, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body.email_lead_map_id, { snoozedUntil: new Date(body.snoozed_until), isArchived: false });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.unsnooze, async (c) => {
  await updateRecord(c, c.req.valid("json").email_lead_map_id, { snoozedUntil: null });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.archive, async (c) => {
  await updateRecord(c, c.req.valid("json").email_lead_map_id, { isArchived: true, snoozedUntil: null });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.unarchive, async (c) => {
  await updateRecord(c, c.req.valid("json").email_lead_map_id, { isArchived: false });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.ignoreReply, async (c) => {
  const { email_lead_map_id, stats_id } = c.req.valid("json");
  const db = database(c.env.DB);
  const record = await findCampaignRecord(db, c.get("principal"), email_lead_map_id);
  if (!(await ignoreReplyByHand(db, record.id, stats_id))) throw ApiError.notFound("Reply not found");
  return c.json({ ok: true }, 200);
});
