-- The directory (src/directory/): which shard holds each account, and which account each key
-- belongs to, so a key or an account id finds its shard in one read. The shards hold everything else.
-- Account ids are handed out here, for every shard (an account keeps its id wherever it lives).
CREATE TABLE directory_accounts (
  account_id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  shard INTEGER NOT NULL,
  -- Account emails are unique across shards: this index is where that is enforced.
  email TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX directory_accounts_shard_idx ON directory_accounts (shard);

-- No reference to directory_accounts: a key of an account from before shards is listed when first
-- used, while its account is not (accounts the directory does not list are on shard 0).
CREATE TABLE directory_keys (
  key_hash TEXT PRIMARY KEY NOT NULL,
  account_id INTEGER NOT NULL
);
CREATE INDEX directory_keys_account_idx ON directory_keys (account_id);
