-- Users: the owners of every user-data row. Local mode has the single user 'local'; protected mode adds
-- users as they sign in (session auth) or present a verified bearer token (managed auth).
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

INSERT INTO users (id, display_name) VALUES ('local', 'Local user');
