-- Personal access tokens: `atr_<id>_<secret>`, only the SHA-256 of the secret stored (as sessions),
-- with the scopes the owner chose (space-separated) and an optional expiry. Keyed by `owner_id` like every
-- row of user data, so deleting a user erases their tokens, and a managed-auth user (no account row)
-- can hold tokens too. Revoking deletes the row.
CREATE TABLE auth_tokens (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash BYTEA NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  expires_at BIGINT
);
CREATE INDEX auth_tokens_by_owner ON auth_tokens (owner_id, created_at);
