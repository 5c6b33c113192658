import { applyD1Migrations, env } from "cloudflare:test";
import { claimIdRange } from "../src/directory/id-ranges";

/** Migrates every database the suite binds (the shards, the directory) and claims shard 1's id range, as a deployment's first account would. */
export async function migrateEveryDatabase(): Promise<void> {
  await Promise.all([
    applyD1Migrations(env.DB, env.TEST_MIGRATIONS),
    applyD1Migrations(env.DB_1, env.TEST_MIGRATIONS),
    applyD1Migrations(env.DIRECTORY, env.TEST_DIRECTORY_MIGRATIONS),
  ]);
  await claimIdRange(env.DB_1, 1);
}
