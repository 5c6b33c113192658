import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { insertTask, tasksOf } from "./store";
import { TASK_PRIORITIES } from "../db/schema";
import { iso } from "../platform/time";
import { findCampaignRecord } from "../platform/access";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody, queryId } from "../platform/openapi";
import { RecordTarget, given, targetRecord, INBOX_TARGET } from "./target";

const CreateTask = z
  .object({
    ...RecordTarget,
    name: z.string().trim().min(1).max(255).optional(),
    title: z.string().trim().min(1).max(255).optional().describe("Alias of name"),
    description: z.string().max(10_000).optional(),
    priority: z.enum(TASK_PRIORITIES).default("MEDIUM"),
    due_date: z.union([z.iso.date(), instant()]).optional(),
  })
  .openapi("CreateTask");

const TaskData = z.object({
  task_id: z.number().int(),
  email_lead_map_id: z.number().int(),
  name: z.string(),
  priority: z.enum(TASK_PRIORITIES),
  due_date: z.string().nullable(),
});

const CreatedTask = z
  .object({ success: z.boolean(), message: z.string(), data: TaskData })
  .openapi("CreatedTask");

const Task = TaskData.extend({ description: z.string().nullable(), created_at: z.string() }).openapi("Task");

const createTask = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/create-task",
  operationId: "createTask",
  description: "A task on a lead's record: `name` (or `title`), `priority`, `due_date` (any ISO date), `description?`. " + INBOX_TARGET,
  tags: ["Master inbox"],
  summary: "Create a task for a lead in a campaign",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(CreateTask, { email_lead_map_id: 1, name: "Call back", priority: "HIGH", due_date: "2030-01-26T10:00:00Z" }) },
  responses: { 200: json(CreatedTask, "The task"), ...errorResponses(401, 404, 422, 429) },
});

const listTasks = createRoute({
  method: "get",
  path: "/api/v1/master-inbox/tasks",
  operationId: "listRecordTasks",
  description: "The tasks of one record (`email_lead_map_id`), oldest first. Foreign → 404.",
  "x-salvo-extension": true,
  tags: ["Master inbox"],
  summary: "A lead's tasks in a campaign, oldest first",
  security: API_KEY_SECURITY,
  request: { query: z.object({ email_lead_map_id: queryId() }) },
  responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(Task) }), "The tasks"), ...errorResponses(401, 404, 422, 429) },
});

export const taskRoutes = createRouter();

taskRoutes.openapi(createTask, async (c) => {
  const body = c.req.valid("json");
  const name = given(body.name, body.title, "name");
  const db = database(c.env.DB);
  const record = await targetRecord(db, c.get("principal"), body);
  const row = await insertTask(db, {
    accountId: record.accountId,
    campaignLeadId: record.id,
    name,
    description: body.description ?? null,
    priority: body.priority,
    dueDate: body.due_date ? new Date(body.due_date) : null,
  });
  return c.json(
    {
      success: true,
      message: "Task created successfully",
      data: {
        task_id: row.id,
        email_lead_map_id: row.campaignLeadId,
        name: row.name,
        priority: row.priority,
        due_date: row.dueDate ? iso(row.dueDate) : null,
      },
    },
    200,
  );
});

taskRoutes.openapi(listTasks, async (c) => {
  const db = database(c.env.DB);
  const record = await findCampaignRecord(db, c.get("principal"), c.req.valid("query").email_lead_map_id);
  const rows = await tasksOf(db, record.id);
  return c.json(
    {
      ok: true,
      data: rows.map((row) => ({
        task_id: row.id,
        email_lead_map_id: row.campaignLeadId,
        name: row.name,
        description: row.description,
        priority: row.priority,
        due_date: row.dueDate ? iso(row.dueDate) : null,
        created_at: iso(row.createdAt),
      })),
    },
    200,
  );
});
