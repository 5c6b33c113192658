import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { campaignLeads } from "./campaigns";
import { createdAt, instant } from "./columns";

export const TASK_PRIORITIES = ["LOW", "MEDIUM", "HIGH"] as const;

export const tasks = sqliteTable(
  "tasks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignLeadId: integer("campaign_lead_id")
      .notNull()
      .references(() => campaignLeads.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    priority: text("priority", { enum: TASK_PRIORITIES }).notNull().default("MEDIUM"),
    dueDate: instant("due_date"),
    createdAt: createdAt(),
  },
  (t) => [index("tasks_record_idx").on(t.campaignLeadId)],
);
