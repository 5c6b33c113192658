import { storeBody, payloadWithRefs, type BodyStore } from "../platform/bodies";
import { utf8Prefix } from "../platform/bytes";
import { foldText } from "../platform/text-search";
import type { NewDelivery } from "../webhooks/outbox";
import type { EventRow } from "./store";

/**
 * An ingestion's plan with its large bodies written to R2 (src/platform/bodies.ts) and replaced by
 * their references: in the event rows, and in the webhook payloads that carry them whole (a reply's
 * `preview_text`, cut from it, stays). Runs before the plan's D1 batch, so every stored reference
 * names an object. A long reply's search text keeps its first BODY_OFFLOAD_BYTES: inbox search
 * matches words there (the body itself comes back whole).
 */
export async function offloadPlanBodies(
  store: BodyStore,
  accountId: number,
  plan: { rows: EventRow[]; deliveries: NewDelivery[] },
): Promise<{ rows: EventRow[]; deliveries: NewDelivery[] }> {
  const refs = new Map<string, string>();
  const rows = await Promise.all(
    plan.rows.map(async (row) => {
      const stored = await storeBody(store, accountId, row.body);
      if (row.body === null || stored === null || stored === row.body) return row;
      refs.set(row.body, stored);
      const folded = row.body_folded === null || store.offloadBytes === null ? row.body_folded : foldText(utf8Prefix(row.body, store.offloadBytes));
      return { ...row, body: stored, body_folded: folded };
    }),
  );
  if (refs.size === 0) return plan;
  return { rows, deliveries: plan.deliveries.map((delivery) => ({ ...delivery, payload: payloadWithRefs(delivery.payload, refs) })) };
}
