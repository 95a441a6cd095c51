-- The host uid each user's sandboxes run as when the server is root: policy sandbox.uid_base + 4096 +
-- uid_index (server/sandbox/uids.ts). One per user, allocated at the first start, kept across restarts;
-- erased with the user (an owner_id row), and handed out again only after every higher index was.
CREATE TABLE sandbox_uids (
  owner_id TEXT PRIMARY KEY,
  uid_index INTEGER NOT NULL UNIQUE CHECK (uid_index >= 0),
  created_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
);
