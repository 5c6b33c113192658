import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { instant } from "./columns";

/**
 * Web app sessions (migration 0040). The cookie's token is stored only as a digest; the session acts
 * as the key it was opened with (kind + digest, resolved by that key's gate on every request).
 */
export const webSessions = sqliteTable(
  "web_sessions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    keyKind: text("key_kind", { enum: ["account", "client"] }).notNull(),
    keyHash: text("key_hash").notNull(),
    keyLast4: text("key_last4").notNull(),
    userAgent: text("user_agent"),
    createdAt: instant("created_at").notNull(),
    lastSeenAt: instant("last_seen_at").notNull(),
    expiresAt: instant("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("web_sessions_token_idx").on(t.tokenHash),
    index("web_sessions_account_idx").on(t.accountId, t.clientId, t.expiresAt),
  ],
);
