import { sql, type SQL } from "drizzle-orm";

/**
 * How readers show a reply's categorisation (CONTRACT section 20.5), as SQL over an `events` row,
 * so the inbox, the message history and webhook payloads present it alike. It sits here, below
 * inbox, webhooks and triage, and imports nothing of ours: the webhook outbox uses it, and triage
 * uses the outbox.
 */

const iso = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`;

/**
 * A REPLY's `categorisation` as JSON text, or NULL: its stored row (a row of categorisation turned
 * off reads as none), else, for a reply that came with a category (`category_id` in the event), the
 * event as its source. `e` is the alias of the `events` row.
 */
export function categorisationJson(e: string): SQL {
  return sql.raw(categorisationJsonText(e));
}

/** categorisationJson as SQL text, for statements written as raw text (the outbox's payload completion). */
export function categorisationJsonText(e: string): string {
  return `CASE WHEN ${e}.type = 'REPLY' THEN coalesce(
    (SELECT json_object('category_id', p.category_id, 'category_name', p.category_name, 'source', p.source, 'rule_id', p.rule_id,
        'model', p.model, 'prompt_template_id', p.prompt_template_id, 'prompt_version', p.prompt_version, 'confidence', p.confidence,
        'needs_review', json(CASE p.needs_review WHEN 1 THEN 'true' ELSE 'false' END), 'reason', p.reason,
        'categorised_at', ${iso("p.categorised_at")})
      FROM reply_categorisations p WHERE p.event_id = ${e}.id AND p.source <> 'off'),
    CASE WHEN ${e}.category_id IS NOT NULL THEN json_object('category_id', ${e}.category_id,
        'category_name', (SELECT c.name FROM lead_categories c WHERE c.id = ${e}.category_id), 'source', 'event', 'rule_id', NULL,
        'model', NULL, 'prompt_template_id', NULL, 'prompt_version', NULL, 'confidence', NULL, 'needs_review', json('false'),
        'reason', 'Given with the event', 'categorised_at', ${iso(`${e}.created_at`)}) END) END`;
}

/** The latest reply of the record `cl` (by time, then id): the subquery's FROM and ORDER. */
const latestReply = (cl: string) =>
  `FROM events r LEFT JOIN reply_categorisations p ON p.event_id = r.id AND p.source <> 'off'
   WHERE r.campaign_lead_id = ${cl}.id AND r.type = 'REPLY' ORDER BY r.occurred_at DESC, r.id DESC LIMIT 1`;

/** The source of the categorisation of the record's latest reply (null when none). */
export function latestCategorySource(cl: string): SQL {
  return sql.raw(`(SELECT coalesce(p.source, CASE WHEN r.category_id IS NOT NULL THEN 'event' END) ${latestReply(cl)})`);
}

/** 1 when the record's latest reply waits in the needs-review lane, else 0. */
export function latestNeedsReview(cl: string): SQL {
  return sql.raw(`coalesce((SELECT p.needs_review ${latestReply(cl)}), 0)`);
}

/**
 * A person's category (any category route) becomes the categorisation of the record's latest reply,
 * source `human`, replacing an automatic one, so no automatic categorisation or replay changes that
 * reply again and it leaves the needs-review lane; the reply carries the category too. Held to the
 * record holding it at commit: set at `now` by the person's change, or, when the person chose the
 * category the record already held (`unchanged`), kept. No reply: nothing to record.
 */
export function humanCategorisation(recordId: number, categoryId: number | null, now: number, unchanged = false): SQL[] {
  const tookEffect = sql`EXISTS (SELECT 1 FROM campaign_leads WHERE id = ${recordId} AND category_id IS ${categoryId}${unchanged ? sql`` : sql` AND category_set_at = ${now}`})`;
  const latest = sql`(SELECT r.id FROM events r WHERE r.campaign_lead_id = ${recordId} AND r.type = 'REPLY' ORDER BY r.occurred_at DESC, r.id DESC LIMIT 1)`;
  return [
    sql`INSERT INTO reply_categorisations (event_id, account_id, campaign_id, campaign_lead_id, category_id, category_name, source, needs_review, reason, categorised_at)
        SELECT e.id, e.account_id, e.campaign_id, e.campaign_lead_id, ${categoryId}, (SELECT c.name FROM lead_categories c WHERE c.id = ${categoryId}),
          'human', 0, 'Set by a person', ${now}
        FROM events e WHERE e.id = ${latest} AND ${tookEffect}
        ON CONFLICT (event_id) DO UPDATE SET category_id = excluded.category_id, category_name = excluded.category_name, source = 'human',
          rule_id = NULL, model = NULL, prompt_template_id = NULL, prompt_version = NULL, confidence = NULL, needs_review = 0,
          reason = excluded.reason, categorised_at = excluded.categorised_at, nonce = NULL`,
    sql`UPDATE events SET category_id = ${categoryId} WHERE id = ${latest} AND ${tookEffect}`,
  ];
}
