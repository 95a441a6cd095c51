-- One sandbox per user: which provider runs it, the provider's id for it, and its lifecycle state as
-- the provider last reported it (webhook events: start, stop, archive, delete) or as the server set it.
CREATE TABLE user_sandboxes (
  owner_id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  state TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
);
CREATE UNIQUE INDEX user_sandboxes_by_id ON user_sandboxes (provider, sandbox_id);
