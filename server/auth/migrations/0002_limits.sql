-- Attempt limits (sign-in per client address and per account, workspace reindex per user): one row per
-- counted attempt, kept until it leaves its window. In the database, not in a process's memory, so a
-- restart forgets nothing and several instances on one database count together. `key` is the limit's
-- name and its subject (`signin-account:ann@example.org`); `expires_at` lets one sweep clear every kind.
CREATE TABLE auth_limit_hits (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX auth_limit_hits_by_key ON auth_limit_hits (key, at);
CREATE INDEX auth_limit_hits_by_expiry ON auth_limit_hits (expires_at);
