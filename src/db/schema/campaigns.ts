import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { createdAt, updatedAt } from "./columns";

export const CAMPAIGN_STATUSES = ["DRAFTED", "ACTIVE", "PAUSED", "STOPPED", "COMPLETED", "ARCHIVED"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const campaigns = sqliteTable(
  "campaigns",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    status: text("status", { enum: CAMPAIGN_STATUSES }).notNull().default("DRAFTED"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("campaigns_account_client_idx").on(t.accountId, t.clientId)],
);
