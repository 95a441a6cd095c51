-- The chat mirror (DESIGN.md ruling 5): pi's JSONL session files are the transcripts; these tables index
-- them per owner with what the files do not hold: runs (one per runId), tool output and file mutations.
CREATE TABLE chat_sessions (
  owner_id TEXT NOT NULL,
  id TEXT NOT NULL,
  session_file TEXT NOT NULL,
  title TEXT,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (owner_id, id)
);
CREATE INDEX chat_sessions_by_update ON chat_sessions (owner_id, updated_at DESC);
CREATE UNIQUE INDEX chat_sessions_by_file ON chat_sessions (owner_id, session_file);

CREATE TABLE chat_runs (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  prompt TEXT NOT NULL,
  mode TEXT NOT NULL,
  plan_action TEXT,
  model TEXT NOT NULL,
  thinking_level TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'aborted')),
  error TEXT,
  settings_json TEXT NOT NULL,
  usage_json TEXT,
  started_at TEXT NOT NULL,
  first_event_at TEXT,
  ended_at TEXT,
  duration_ms INTEGER,
  FOREIGN KEY (owner_id, session_id) REFERENCES chat_sessions (owner_id, id) ON DELETE CASCADE
);
CREATE INDEX chat_runs_by_session ON chat_runs (owner_id, session_id, started_at);

CREATE TABLE chat_tool_calls (
  owner_id TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES chat_runs (id) ON DELETE CASCADE,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  args_json TEXT NOT NULL,
  output_json TEXT,
  is_error INTEGER,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  PRIMARY KEY (run_id, tool_call_id)
);

CREATE TABLE chat_file_mutations (
  id INTEGER PRIMARY KEY,
  owner_id TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES chat_runs (id) ON DELETE CASCADE,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  path TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX chat_file_mutations_by_run ON chat_file_mutations (run_id);

-- Provider keys a user stored through POST /api/chat/providers. The environment variable wins when set.
CREATE TABLE chat_provider_keys (
  owner_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  api_key TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (owner_id, provider)
);
