-- Session auth (APP_AUTH_SECRET): accounts with a password, sessions whose secret is stored only as a
-- SHA-256 hash, and single-use invite codes (stored hashed too). An account is a row of `users` (the
-- owners every family keys its rows by) plus its sign-in details here. Times in epoch milliseconds are
-- BIGINT (SQLite's INTEGER is 64-bit; PostgreSQL's is not).
CREATE TABLE auth_accounts (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  admin INTEGER NOT NULL DEFAULT 0,
  disabled_at TEXT,
  created_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  updated_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
);

CREATE TABLE auth_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret_hash BYTEA NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX auth_sessions_by_user ON auth_sessions (user_id);

CREATE TABLE auth_invites (
  code_hash TEXT PRIMARY KEY,
  admin INTEGER NOT NULL DEFAULT 0,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_by TEXT,
  used_at BIGINT
);
