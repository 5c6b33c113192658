-- A client's stable UUID and its stored code snippets (CONTRACT 21.4). Existing clients get a random
-- version-4 UUID here; new ones get theirs when created.

ALTER TABLE clients ADD COLUMN uuid TEXT;
UPDATE clients SET uuid = lower(
  hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
  substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))
);
CREATE UNIQUE INDEX clients_uuid_idx ON clients (uuid);

CREATE TABLE client_code_integrations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  snippet_name TEXT NOT NULL,
  snippet_code TEXT NOT NULL,
  created_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  updated_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
);
CREATE INDEX client_code_integrations_client_idx ON client_code_integrations (client_id, id);
