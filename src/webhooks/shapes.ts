import { z } from "@hono/zod-openapi";
import { WEBHOOK_SCOPES, type WebhookScope } from "../db/schema";
import { ApiError } from "../platform/errors";
import { iso } from "../platform/time";
import { canonicalKind, eventTypeMap, type WebhookEventKind } from "./event-kinds";
import type { WebhookRow } from "./store";

/** The Webhook of CONTRACT sections 5 and 14 (with C11's `event_types` and `categories`). */
export const Webhook = z
  .object({
    id: z.number().int(),
    email_campaign_id: z.number().int().nullable(),
    name: z.string(),
    webhook_url: z.string(),
    event_type_map: z.record(z.string(), z.boolean()),
    category_id_map: z.record(z.string(), z.string()),
    association_type: z.enum(WEBHOOK_SCOPES),
    client_id: z.number().int().nullable(),
    webhook_type: z.string().nullable(),
    event_types: z.array(z.string()),
    categories: z.array(z.string()),
    disabled_at: z
      .string()
      .nullable()
      .openapi({ description: "When its receiver answered 410 Gone and deliveries stopped (extension); null while it delivers. Any change to the webhook turns it back on" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Webhook");

export function presentWebhook(row: WebhookRow, names: Map<number, string>): z.infer<typeof Webhook> {
  const map = eventTypeMap(row.eventTypes);
  return {
    id: row.id,
    email_campaign_id: row.campaignId,
    name: row.name,
    webhook_url: row.url,
    event_type_map: map,
    category_id_map: Object.fromEntries(row.categoryIds.map((id) => [String(id), names.get(id) ?? ""])),
    association_type: row.associationType,
    client_id: row.clientId,
    webhook_type: row.webhookType,
    event_types: Object.entries(map)
      .filter(([, on]) => on)
      .map(([kind]) => kind),
    categories: row.categoryIds.map((id) => names.get(id) ?? ""),
    disabled_at: row.disabledAt === null ? null : iso(row.disabledAt),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** An id in a body: a number or its decimal string. */
export const bodyId = z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,15}$/, "Must be a positive integer").transform(Number)]);

/** A kind or an alias, in any case, as its canonical kind; anything else is the contract's 422 message. */
export const EventKindName = z
  .string()
  .max(64)
  .transform((name, ctx) => {
    const kind = canonicalKind(name.trim().toUpperCase());
    if (kind === null) {
      ctx.addIssue({ code: "custom", message: `Invalid event_types - ${name}` });
      return z.NEVER;
    }
    return kind;
  })
  .openapi({ type: "string", example: "EMAIL_REPLY", description: "An event kind (CONTRACT section 14) or one of its aliases (LEAD_REPLIED, EMAIL_OPENED, …)" });

/** `{KIND: boolean}`: the kinds switched on; unknown kinds are the same 422 as in lists. */
const EventTypeMap = z.record(z.string().max(64), z.boolean()).transform((map, ctx) => {
  const on: WebhookEventKind[] = [];
  for (const [name, enabled] of Object.entries(map)) {
    const kind = canonicalKind(name.trim().toUpperCase());
    if (kind === null) ctx.addIssue({ code: "custom", message: `Invalid event_types - ${name}`, path: [name] });
    else if (enabled) on.push(kind);
  }
  return on;
});

const SCOPE_NUMBERS: Record<string, WebhookScope> = { "1": "user", "2": "client", "3": "campaign" };

/** `user`/`client`/`campaign` in any case, or 1/2/3 as a number or a string. */
export const AssociationType = z
  .union([z.string().max(16), z.number().int()])
  .transform((value, ctx) => {
    const text = String(value).trim().toLowerCase();
    const scope = SCOPE_NUMBERS[text] ?? (WEBHOOK_SCOPES as readonly string[]).find((s) => s === text);
    if (!scope) {
      ctx.addIssue({ code: "custom", message: "association_type must be user, client or campaign (or 1, 2, 3)" });
      return z.NEVER;
    }
    return scope as WebhookScope;
  })
  .openapi({ description: "user | client | campaign, in any case, or 1 | 2 | 3" });

const CategoryRef = z.union([z.number().int().positive(), z.string().trim().min(1).max(100)]);

/** `{"<id>": true}` (the answer's `{"<id>": "<name>"}` is read back the same way): the ids switched on. */
const CategoryIdMap = z.record(z.string().max(32), z.union([z.boolean(), z.string().max(100)])).transform((map, ctx) => {
  const ids: number[] = [];
  for (const [key, on] of Object.entries(map)) {
    if (!/^[1-9]\d{0,15}$/.test(key)) ctx.addIssue({ code: "custom", message: "Category ids must be positive integers", path: [key] });
    else if (on !== false) ids.push(Number(key));
  }
  return ids;
});

/** The kinds and category references a create or update names, canonical form first. */
export interface KindAndCategoryInput {
  event_type_map?: WebhookEventKind[];
  event_types?: WebhookEventKind[];
  event_type?: WebhookEventKind;
  category_id_map?: number[];
  categories?: (number | string)[];
  category_id?: number | string;
}

export const kindAndCategoryFields = {
  event_type_map: EventTypeMap.optional(),
  event_types: z.array(EventKindName).max(50).optional(),
  event_type: EventKindName.optional(),
  category_id_map: CategoryIdMap.optional(),
  categories: z.array(CategoryRef).max(50).optional(),
  category_id: CategoryRef.optional(),
};

/** The enabled kinds named (map, then list, then single kind); undefined when none was given. */
export function requestedKinds(body: KindAndCategoryInput): WebhookEventKind[] | undefined {
  const kinds = body.event_type_map ?? body.event_types ?? (body.event_type === undefined ? undefined : [body.event_type]);
  return kinds === undefined ? undefined : [...new Set(kinds)];
}

/** The category references named (map, then list, then single id); undefined when none was given. */
export function requestedCategories(body: KindAndCategoryInput): (number | string)[] | undefined {
  return body.category_id_map ?? body.categories ?? (body.category_id === undefined ? undefined : [body.category_id]);
}

/**
 * The kinds a webhook of a scope may store: at least one, and the mailbox kind only where it can
 * arrive (a `campaign`-scope webhook never hears an event without a campaign).
 */
export function checkKinds(kinds: WebhookEventKind[], scope: WebhookScope): WebhookEventKind[] {
  if (kinds.length === 0) throw ApiError.validation([{ path: "event_types", message: "At least one event type must be enabled" }]);
  if (scope === "campaign" && kinds.includes("EMAIL_ACCOUNT_DISCONNECTED")) {
    throw ApiError.validation([{ path: "event_types", message: "EMAIL_ACCOUNT_DISCONNECTED needs a user or client webhook" }]);
  }
  return kinds;
}

/** Category ids from ids or (case-insensitive) names; anything unknown is a 422. */
export function resolveCategories(given: (number | string)[], names: Map<number, string>): number[] {
  const byName = new Map([...names].map(([id, name]) => [name.toLowerCase(), id]));
  const issues: { path: string; message: string }[] = [];
  const ids = given.map((value, index) => {
    const id = typeof value === "number" ? (names.has(value) ? value : undefined) : byName.get(value.toLowerCase());
    if (id === undefined) issues.push({ path: `categories.${index}`, message: "Unknown lead category" });
    return id ?? 0;
  });
  if (issues.length) throw ApiError.validation(issues);
  return [...new Set(ids)];
}
