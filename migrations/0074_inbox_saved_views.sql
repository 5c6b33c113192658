-- The master inbox's saved views (CONTRACT 21.3): a name and section 15's view filters as given, of the
-- account or one of its clients; `POST /master-inbox/views` reads them by `saved_view_id`.

CREATE TABLE inbox_saved_views (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER REFERENCES clients(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  filters TEXT NOT NULL DEFAULT '{}',
  limited_access INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  updated_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
);
CREATE INDEX inbox_saved_views_scope_idx ON inbox_saved_views (account_id, client_id, id);
