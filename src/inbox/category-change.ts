import type { SQL } from "drizzle-orm";
import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { categoryDeliveries } from "../webhooks/fanout";
import { enqueue } from "../webhooks/outbox";
import { affirmCategory, loadCategoryChange, setCategory } from "./store";

/**
 * Sets a record's category by hand (the inbox's update-category, the campaign lead route), with its
 * LEAD_CATEGORY_UPDATED deliveries in the same batch. False when the category is not one the account
 * may use (nothing changes); the record must be one the caller may see (404 otherwise). `also`: what
 * the same change causes besides (the campaign lead route's pause), committed in that batch.
 */
export async function changeCategory(
  env: Bindings,
  principal: Principal,
  recordId: number,
  categoryId: number | null,
  also: SQL[] = [],
): Promise<boolean> {
  const db = database(env.DB);
  const { record, category, webhooks } = await loadCategoryChange(db, principal, recordId, categoryId);
  if (categoryId !== null && !category) return false;
  const now = Date.now();
  if (record.categoryId === categoryId) {
    await affirmCategory(env.DB, record.id, categoryId, now, also);
    return true;
  }
  const deliveries = categoryDeliveries(webhooks, record.campaign, {
    recordId: record.id,
    leadId: record.leadId,
    leadEmail: record.leadEmail,
    oldCategoryId: record.categoryId,
    newCategoryId: categoryId,
    newCategoryName: category?.name ?? null,
    occurredAt: now,
  });
  await enqueue(env, await setCategory(env.DB, record.id, categoryId, deliveries, now, also));
  return true;
}
