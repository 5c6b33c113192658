import { createRoute, z } from "@hono/zod-openapi";
import { requireLead } from "../platform/access";
import { database } from "../platform/db";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody, pathId } from "../platform/openapi";
import { iso } from "../platform/time";
import { insertNote, isMessageOf, notesOfLead, setRevenue, tasksOfLead, upsertReminder } from "./crm-store";
import { ApiError } from "../platform/errors";
import { IdInput, LEAD_MAPPING_NOT_FOUND, RecordTarget, given, targetRecord, INBOX_TARGET } from "./target";

const ack = <T extends z.ZodType>(data: T) => z.object({ ok: z.boolean(), success: z.boolean(), message: z.string(), data });

const NoteData = z.object({
  id: z.number().int(),
  email_lead_map_id: z.number().int(),
  lead_id: z.number().int(),
  note_message: z.string(),
  created_at: z.string(),
});

const createNote = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/create-note",
  operationId: "createNote",
  description: "A note on the conversation: `note_message` 1–5000 chars (or `note`). Read back with `/crm/leads/notes/{lead_id}`. " + INBOX_TARGET,
  tags: ["Master inbox"],
  summary: "Add a note to a conversation",
  security: API_KEY_SECURITY,
  request: {
    body: jsonBody(
      z.object({
        ...RecordTarget,
        note_message: z.string().trim().min(1).max(5000).optional(),
        note: z.string().trim().min(1).max(5000).optional().describe("Alias of note_message"),
      }), { email_lead_map_id: 1, note_message: "Asked for pricing in March" },
    ),
  },
  responses: { 200: json(ack(NoteData), "The note"), ...errorResponses(401, 404, 422, 429) },
});

const ReminderData = z.object({ reminder_id: z.number().int(), email_lead_map_id: z.number().int(), reminder_time: z.string(), message: z.string() });
const reminderTime = instant();

const setReminder = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/set-reminder",
  operationId: "setReminder",
  description: "One reminder per record (a new one replaces it): `message` 1–1000, `reminder_time` (ISO; a past time is kept as overdue). Nothing is notified. " + INBOX_TARGET,
  tags: ["Master inbox"],
  summary: "Set the conversation's reminder (replaces the previous one; a past time shows as overdue)",
  security: API_KEY_SECURITY,
  request: {
    body: jsonBody(
      z.object({
        ...RecordTarget,
        email_stats_id: IdInput.optional(),
        message: z.string().trim().min(1).max(1000),
        reminder_time: reminderTime.optional(),
        reminder_date: reminderTime.optional().describe("Alias of reminder_time"),
      }), { email_lead_map_id: 1, message: "Follow up", reminder_time: "2030-01-27T09:00:00Z" },
    ),
  },
  responses: { 200: json(ack(ReminderData), "The reminder"), ...errorResponses(401, 404, 422, 429) },
});

const Revenue = z
  .union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/, "Expected a number").transform(Number)])
  .pipe(z.number().min(0, "revenue must not be negative").max(1e13));

const updateRevenue = createRoute({
  method: "patch",
  path: "/api/v1/master-inbox/update-revenue",
  operationId: "setConversationRevenue",
  description: "`revenue` ≥ 0 (number or numeric string; negative → 422), two decimals kept; analytics sum it. " + INBOX_TARGET,
  tags: ["Master inbox"],
  summary: "Set the revenue of a conversation (two decimals kept)",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(z.object({ ...RecordTarget, revenue: Revenue }), { email_lead_map_id: 1, revenue: 1250.5 }) },
  responses: {
    200: json(ack(z.object({ email_lead_map_id: z.number().int(), revenue: z.string(), updated_at: z.string() })), "Updated"),
    ...errorResponses(401, 404, 422, 429),
  },
});

const LeadNote = z.object({
  id: z.number().int(),
  lead_id: z.number().int(),
  email_lead_map_id: z.number().int(),
  note_message: z.string(),
  created_by: z.null(),
  created_at: z.string(),
});
const LeadTask = z.object({
  id: z.number().int(),
  lead_id: z.number().int(),
  email_lead_map_id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  priority: z.string(),
  due_date: z.string().nullable(),
  created_at: z.string(),
});

const leadParams = z.object({ lead_id: pathId("lead_id") });

const leadNotes = createRoute({
  method: "get",
  path: "/api/v1/crm/leads/notes/{lead_id}",
  operationId: "listLeadNotes",
  description: "A lead's notes in every campaign, oldest first. Foreign lead → 404.",
  tags: ["Master inbox"],
  summary: "A lead's notes in every campaign, oldest first",
  security: API_KEY_SECURITY,
  request: { params: leadParams },
  responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(LeadNote) }), "The notes"), ...errorResponses(401, 404, 422, 429) },
});

const leadTasks = createRoute({
  method: "get",
  path: "/api/v1/crm/leads/tasks/{lead_id}",
  operationId: "listLeadTasks",
  description: "A lead's tasks in every campaign, oldest first. Foreign lead → 404.",
  tags: ["Master inbox"],
  summary: "A lead's tasks in every campaign, oldest first",
  security: API_KEY_SECURITY,
  request: { params: leadParams },
  responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(LeadTask) }), "The tasks"), ...errorResponses(401, 404, 422, 429) },
});

export const crmRoutes = createRouter();

crmRoutes.openapi(createNote, async (c) => {
  const body = c.req.valid("json");
  const message = given(body.note_message, body.note, "note_message");
  const db = database(c.env.DB);
  const record = await targetRecord(db, c.get("principal"), body, LEAD_MAPPING_NOT_FOUND);
  const note = await insertNote(db, { accountId: record.accountId, campaignLeadId: record.id, leadId: record.leadId, message });
  return c.json(
    {
      ok: true,
      success: true,
      message: "Note created successfully",
      data: { id: note.id, email_lead_map_id: record.id, lead_id: record.leadId, note_message: note.message, created_at: iso(note.createdAt) },
    },
    200,
  );
});

crmRoutes.openapi(setReminder, async (c) => {
  const body = c.req.valid("json");
  const at = new Date(given(body.reminder_time, body.reminder_date, "reminder_time"));
  const db = database(c.env.DB);
  const record = await targetRecord(db, c.get("principal"), body, LEAD_MAPPING_NOT_FOUND);
  if (body.email_stats_id !== undefined && !(await isMessageOf(db, record.id, body.email_stats_id))) throw ApiError.notFound("Email stats not found");
  const reminder = await upsertReminder(db, {
    accountId: record.accountId,
    campaignLeadId: record.id,
    remindAt: at,
    message: body.message,
    emailStatsId: body.email_stats_id ?? null,
  });
  return c.json(
    {
      ok: true,
      success: true,
      message: "Reminder set successfully",
      data: { reminder_id: reminder.id, email_lead_map_id: record.id, reminder_time: iso(reminder.remindAt), message: reminder.message },
    },
    200,
  );
});

crmRoutes.openapi(updateRevenue, async (c) => {
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const record = await targetRecord(db, c.get("principal"), body, LEAD_MAPPING_NOT_FOUND);
  const cents = Math.round(body.revenue * 100);
  const now = new Date();
  await setRevenue(db, record.id, cents, now);
  return c.json(
    {
      ok: true,
      success: true,
      message: "Revenue updated successfully",
      data: { email_lead_map_id: record.id, revenue: (cents / 100).toFixed(2), updated_at: iso(now) },
    },
    200,
  );
});

crmRoutes.openapi(leadNotes, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const lead = await requireLead(db, principal, c.req.valid("param").lead_id);
  const rows = await notesOfLead(db, principal, lead.id);
  return c.json(
    {
      ok: true,
      data: rows.map((note) => ({
        id: note.id,
        lead_id: note.leadId,
        email_lead_map_id: note.campaignLeadId,
        note_message: note.message,
        created_by: null,
        created_at: iso(note.createdAt),
      })),
    },
    200,
  );
});

crmRoutes.openapi(leadTasks, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const lead = await requireLead(db, principal, c.req.valid("param").lead_id);
  const rows = await tasksOfLead(db, principal, lead.id);
  return c.json(
    {
      ok: true,
      data: rows.map(({ task, leadId }) => ({
        id: task.id,
        lead_id: leadId,
        email_lead_map_id: task.campaignLeadId,
        name: task.name,
        description: task.description,
        priority: task.priority,
        due_date: task.dueDate ? iso(task.dueDate) : null,
        created_at: iso(task.createdAt),
      })),
    },
    200,
  );
});
