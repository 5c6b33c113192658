-- Campaign folders (CONTRACT 21.1, extension): an account's (or one client's) named folders, and the
-- folder a campaign sits in. Deleting a folder leaves its campaigns unfiled.

CREATE TABLE campaign_folders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER REFERENCES clients(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
);
CREATE INDEX campaign_folders_account_client_idx ON campaign_folders (account_id, client_id);

ALTER TABLE campaigns ADD COLUMN folder_id INTEGER REFERENCES campaign_folders(id) ON DELETE SET NULL;
-- A folder's campaigns (its count, the list filter) as one range.
CREATE INDEX campaigns_folder_idx ON campaigns (folder_id) WHERE folder_id IS NOT NULL;
