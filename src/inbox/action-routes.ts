import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody, operationWords, type OperationWords } from "../platform/openapi";
import { changeCategory } from "./category-change";
import { changeRecord, resolveCategory, type RecordChange } from "./store";
import { IdInput, RecordTarget, given, targetRecord, type RecordTargetInput } from "./target";

const Ok = z.object({ ok: z.boolean() });

function action<T extends z.ZodRawShape>(method: "post" | "patch", path: string, words: OperationWords, fields: T) {
  return createRoute({
    method,
    path: `/api/v1/master-inbox/${path}`,
    ...operationWords(words),
    description: "The record is `email_lead_map_id`, or the lead's record in a campaign given as `lead_id` + `campaign_id`.",
    tags: ["Master inbox"],
    security: API_KEY_SECURITY,
    request: { body: jsonBody(z.object({ ...RecordTarget, ...fields }), words.example) },
    responses: { 200: json(Ok, "Done"), ...errorResponses(400, 401, 404, 422, 429) },
  });
}

const futureInstant = instant().refine((value) => Date.parse(value) > Date.now(), "snoozed_until must be in the future");

/** A category id, a decimal string, a category name (BC), or "" / null to clear it (compat rule C8). */
const CategoryInput = z.union([z.number().int().positive(), z.string().max(255)]).nullable();

const routes = {
  readStatus: action("patch", "change-read-status", {
    operationId: "setConversationReadStatus",
    summary: "Mark a conversation read or unread",
    example: { email_lead_map_id: 1, read_status: true },
  }, {
    read_status: z.boolean().optional(),
    is_read: z.boolean().optional().describe("Alias of read_status"),
  }),
  category: action("patch", "update-category", {
    operationId: "setConversationCategory",
    summary: "Categorise a lead (null or \"\" clears)",
    example: { email_lead_map_id: 1, category_id: 1 },
  }, {
    category_id: CategoryInput.optional(),
    category: CategoryInput.optional().describe("Alias of category_id; also a category name"),
  }),
  teamMember: action("post", "update-team-member", {
    operationId: "setConversationTeamMember",
    summary: "Assign a team member (null clears)",
    example: { email_lead_map_id: 1, team_member_id: 7 },
  }, {
    team_member_id: IdInput.nullable(),
  }),
  snooze: action("post", "snooze", {
    operationId: "snoozeConversation",
    summary: "Snooze a conversation until a future time",
    example: { email_lead_map_id: 1, snoozed_until: "2030-01-25T09:00:00.000Z" },
  }, { snoozed_until: futureInstant }),
  unsnooze: action("post", "unsnooze", {
    operationId: "unsnoozeConversation",
    summary: "Bring a snoozed conversation back to the inbox",
    example: { email_lead_map_id: 1 },
  }, {}),
  archive: action("post", "archive", {
    operationId: "archiveConversation",
    summary: "Archive a conversation",
    example: { email_lead_map_id: 1 },
  }, {}),
  unarchive: action("post", "unarchive", {
    operationId: "unarchiveConversation",
    summary: "Bring an archived conversation back to the inbox",
    example: { email_lead_map_id: 1 },
  }, {}),
  important: action("patch", "mark-important", {
    operationId: "markConversationImportant",
    summary: "Mark a conversation important (or not): the important view",
    example: { email_lead_map_id: 1, is_important: true },
    extension: true,
  }, {
    is_important: z.boolean().default(true),
  }),
};

/** Loads the caller's record (404 otherwise) and applies one change to it. */
async function updateRecord(c: Context<AppEnv>, target: RecordTargetInput, change: RecordChange) {
  const db = database(c.env.DB);
  const record = await targetRecord(db, c.get("principal"), target);
  await changeRecord(db, record.id, change);
  return record;
}

export const actionRoutes = createRouter();

actionRoutes.openapi(routes.readStatus, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body, { isRead: given(body.read_status, body.is_read, "read_status") });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.category, async (c) => {
  const body = c.req.valid("json");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const target = await targetRecord(db, principal, body);
  const categoryId = await resolveCategory(db, principal.accountId, given(body.category_id, body.category, "category_id"));
  if (!(await changeCategory(c.env, principal, target.id, categoryId))) {
    throw ApiError.validation([{ path: "category_id", message: "Unknown lead category" }]);
  }
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.teamMember, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body, { teamMemberId: body.team_member_id });
  return c.json({ ok: true }, 200);
});

// Archived and snoozed are exclusive states: entering one leaves the other.
actionRoutes.openapi(routes.snooze, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body, { snoozedUntil: new Date(body.snoozed_until), isArchived: false });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.unsnooze, async (c) => {
  await updateRecord(c, c.req.valid("json"), { snoozedUntil: null });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.archive, async (c) => {
  await updateRecord(c, c.req.valid("json"), { isArchived: true, snoozedUntil: null });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.unarchive, async (c) => {
  await updateRecord(c, c.req.valid("json"), { isArchived: false });
  return c.json({ ok: true }, 200);
});

actionRoutes.openapi(routes.important, async (c) => {
  const body = c.req.valid("json");
  await updateRecord(c, body, { isImportant: body.is_important });
  return c.json({ ok: true }, 200);
});
