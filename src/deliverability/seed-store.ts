import { asc, eq, sql } from "drizzle-orm";
import { seedMailboxes, spamProviders, type SeedCursor } from "../db/schema";
import type { Database } from "../platform/db";
import { inList } from "../platform/sql";
import type { ProviderRow } from "./shared";

export type SeedMailboxRow = typeof seedMailboxes.$inferSelect;
type NewSeedMailbox = typeof seedMailboxes.$inferInsert;

/** The context a seed mailbox's IMAP password is sealed under (its address: the row id is not known before insert). */
export const seedPasswordContext = (email: string) => `seed-mailbox:${email.toLowerCase()}`;

/** Every seed mailbox, by provider then age. */
export function listSeedMailboxes(db: Database): Promise<SeedMailboxRow[]> {
  return db.select().from(seedMailboxes).orderBy(asc(seedMailboxes.providerId), asc(seedMailboxes.id));
}

export function findSeedMailbox(db: Database, id: number): Promise<SeedMailboxRow | undefined> {
  return db.select().from(seedMailboxes).where(eq(seedMailboxes.id, id)).get();
}

export async function seedEmailTaken(db: Database, email: string): Promise<boolean> {
  const row = await db.select({ id: seedMailboxes.id }).from(seedMailboxes).where(eq(seedMailboxes.email, email)).get();
  return row !== undefined;
}

export function insertSeedMailbox(db: Database, seed: NewSeedMailbox): Promise<SeedMailboxRow> {
  return db.insert(seedMailboxes).values(seed).returning().get();
}

export async function deleteSeedMailbox(db: Database, id: number): Promise<void> {
  await db.delete(seedMailboxes).where(eq(seedMailboxes.id, id));
}

/** Where the checker's reading of a seed stands after a pass (its folder cursors, or why it failed). */
export async function saveSeedCheck(db: Database, id: number, cursor: SeedCursor | null, error: string | null, now: number): Promise<void> {
  await db
    .update(seedMailboxes)
    .set({ ...(cursor === null ? {} : { cursor }), checkError: error, checkedAt: new Date(now) })
    .where(eq(seedMailboxes.id, id));
}

/**
 * The providers offered for new tests: those of the catalogue with at least one seed mailbox, each
 * with its first seed's address as the catalogue's `seed_email`.
 */
export function offeredProviders(db: Database): Promise<ProviderRow[]> {
  // Written out: drizzle leaves a selected field's columns unqualified, and inside the subquery `id` would be the seed's.
  const firstSeed = sql<string>`(SELECT m.email FROM seed_mailboxes m WHERE m.provider_id = spam_providers.id ORDER BY m.id LIMIT 1)`;
  return db
    .select({
      id: spamProviders.id,
      providerNum: spamProviders.providerNum,
      name: spamProviders.name,
      groupId: spamProviders.groupId,
      groupName: spamProviders.groupName,
      regionId: spamProviders.regionId,
      regionName: spamProviders.regionName,
      seedEmail: firstSeed,
    })
    .from(spamProviders)
    .where(sql`EXISTS (SELECT 1 FROM seed_mailboxes m WHERE m.provider_id = spam_providers.id)`)
    .orderBy(asc(spamProviders.regionId), asc(spamProviders.groupId), asc(spamProviders.name));
}

/** The seed addresses of the given providers, by provider then age. */
export function seedsOfProviders(db: Database, providerIds: string[]): Promise<{ providerId: string; email: string }[]> {
  if (providerIds.length === 0) return Promise.resolve([]);
  return db
    .select({ providerId: seedMailboxes.providerId, email: seedMailboxes.email })
    .from(seedMailboxes)
    .where(sql`${seedMailboxes.providerId} ${inList(providerIds)}`)
    .orderBy(asc(seedMailboxes.providerId), asc(seedMailboxes.id));
}
