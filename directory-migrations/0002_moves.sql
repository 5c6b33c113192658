-- Accounts moved between shards (src/moves/): one row per account, the move in progress or the last
-- one. `cursor` is where the bounded steps left off (JSON), so any worker (the operator's route, the
-- minute cron) picks the move up where the last one stopped.
CREATE TABLE directory_moves (
  account_id INTEGER PRIMARY KEY NOT NULL,
  from_shard INTEGER NOT NULL,
  to_shard INTEGER NOT NULL,
  state TEXT NOT NULL,
  cursor TEXT NOT NULL DEFAULT '{}',
  copied_rows INTEGER NOT NULL DEFAULT 0,
  deleted_rows INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  -- When the directory named the new shard: the account's writes were refused from started_at to then.
  switched_at INTEGER,
  finished_at INTEGER,
  -- One worker at a time takes the move's steps (the operator's call, the minute cron): the one
  -- holding this lease, until it ends; a worker that died lets it run out.
  lease_token TEXT,
  lease_until INTEGER
);

-- Id blocks beyond the first MAX_SHARDS (block k of those is shard k's): a shard that takes in an
-- account whose ids lie above its own block continues in a fresh block, the next one free, so no two
-- shards ever hand out the same id (src/directory/id-ranges.ts).
CREATE TABLE directory_id_blocks (
  block INTEGER PRIMARY KEY NOT NULL,
  shard INTEGER NOT NULL,
  claimed_at INTEGER NOT NULL
);
