import type { EventType } from "../db/schema";

export const WEBHOOK_EVENT_KINDS = [
  "EMAIL_SENT",
  "FIRST_EMAIL_SENT",
  "EMAIL_OPEN",
  "EMAIL_LINK_CLICK",
  "EMAIL_REPLY",
  "EMAIL_BOUNCE",
  "LEAD_UNSUBSCRIBED",
  "LEAD_CATEGORY_UPDATED",
  "CAMPAIGN_STATUS_CHANGED",
  "UNTRACKED_REPLIES",
  // Accepted and stored, never sent: Salvo has no manual steps.
  "MANUAL_STEP_REACHED",
  "EMAIL_ACCOUNT_DISCONNECTED",
] as const;
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/** Names some docs pages use, stored as their canonical kind (CONTRACT section 14). */
const KIND_ALIASES: Record<string, WebhookEventKind> = {
  EMAIL_OPENED: "EMAIL_OPEN",
  LEAD_OPENED: "EMAIL_OPEN",
  EMAIL_REPLIED: "EMAIL_REPLY",
  LEAD_REPLIED: "EMAIL_REPLY",
  EMAIL_CLICKED: "EMAIL_LINK_CLICK",
  LEAD_CLICKED: "EMAIL_LINK_CLICK",
  EMAIL_BOUNCED: "EMAIL_BOUNCE",
};

const KNOWN: ReadonlySet<string> = new Set(WEBHOOK_EVENT_KINDS);

/** A kind or one of its aliases as the canonical kind; null when it is neither. */
export function canonicalKind(name: string): WebhookEventKind | null {
  if (KNOWN.has(name)) return name as WebhookEventKind;
  return KIND_ALIASES[name] ?? null;
}


/** The webhook kinds one stored event produces (a first sequence-1 send is also FIRST_EMAIL_SENT). */
export function kindsOf(type: EventType, firstSend: boolean): WebhookEventKind[] {
  switch (type) {
    case "SENT":
      return firstSend ? ["EMAIL_SENT", "FIRST_EMAIL_SENT"] : ["EMAIL_SENT"];
    case "OPEN":
      return ["EMAIL_OPEN"];
    case "CLICK":
      return ["EMAIL_LINK_CLICK"];
    case "REPLY":
      return ["EMAIL_REPLY"];
    case "BOUNCE":
      return ["EMAIL_BOUNCE"];
    case "UNSUBSCRIBE":
      return ["LEAD_UNSUBSCRIBED"];
    case "BLOCK":
      return [];
  }
}

/** Every kind with true or false, as the interface's `event_type_map` shows it. */
export function eventTypeMap(subscribed: readonly string[]): Record<WebhookEventKind, boolean> {
  return Object.fromEntries(WEBHOOK_EVENT_KINDS.map((kind) => [kind, subscribed.includes(kind)])) as Record<
    WebhookEventKind,
    boolean
  >;
}

const CATEGORY_FILTERED: ReadonlySet<WebhookEventKind> = new Set(["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"]);

/**
 * Whether a webhook wants one kind for a lead in a category: it must subscribe to the kind, and a
 * non-empty category list limits replies and category changes to leads in those categories.
 */
export function wants(
  webhook: { eventTypes: readonly string[]; categoryIds: readonly number[] },
  kind: WebhookEventKind,
  leadCategoryId: number | null,
): boolean {
  if (!webhook.eventTypes.includes(kind)) return false;
  if (webhook.categoryIds.length === 0 || !CATEGORY_FILTERED.has(kind)) return true;
  return leadCategoryId !== null && webhook.categoryIds.includes(leadCategoryId);
}
