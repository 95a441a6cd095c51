-- The turns family on PostgreSQL: the twin of 0001_turns.sql. Tables whose stores order by SQLite's
-- implicit `rowid` (insertion order, the tie-break of equal timestamps) declare it here as an identity
-- column of the same name, so the stores' ORDER BY reads the same on both engines.
CREATE TABLE turn_sessions (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  title TEXT NOT NULL,
  archived INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX turn_sessions_owner ON turn_sessions (owner_id, created_at DESC);

CREATE TABLE turn_runs (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES turn_sessions (id),
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  input_json TEXT NOT NULL,
  -- running → completed | failed | cancelled
  status TEXT NOT NULL,
  committed INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  parts_json TEXT,
  usage_json TEXT,
  error_code TEXT,
  error_message TEXT,
  trace_id TEXT,
  duration_ms INTEGER,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (session_id, idempotency_key)
);
-- At most one running turn per session: the claim is this index (INSERT … ON CONFLICT DO NOTHING).
CREATE UNIQUE INDEX turn_runs_one_running ON turn_runs (session_id) WHERE status = 'running';
CREATE INDEX turn_runs_session ON turn_runs (session_id, created_at);

CREATE TABLE turn_events (
  run_id TEXT NOT NULL REFERENCES turn_runs (id),
  owner_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE turn_attachments (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  filename TEXT NOT NULL,
  media_type TEXT NOT NULL,
  byte_size BIGINT NOT NULL,
  sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE turn_artifacts (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES turn_runs (id),
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  media_type TEXT NOT NULL,
  byte_size BIGINT NOT NULL,
  sha256 TEXT NOT NULL,
  -- candidate (private, during the turn) → committed (public after the turn commits)
  state TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE turn_spans (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  parent_id TEXT,
  run_id TEXT,
  name TEXT NOT NULL,
  started_at TEXT NOT NULL,
  duration_ms BIGINT NOT NULL,
  status TEXT NOT NULL,
  attributes_json TEXT NOT NULL
);
CREATE INDEX turn_spans_trace ON turn_spans (trace_id);
