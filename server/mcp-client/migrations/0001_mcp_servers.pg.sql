-- The twin of 0001_mcp_servers.sql on PostgreSQL (docs/database.md). `headers` holds the secrets.
CREATE TABLE mcp_servers (
  owner_id TEXT NOT NULL,
  name TEXT NOT NULL,
  transport TEXT NOT NULL CHECK (transport IN ('http', 'stdio')),
  url TEXT,
  command TEXT,
  args TEXT NOT NULL DEFAULT '[]',
  headers TEXT NOT NULL DEFAULT '{}',
  approval TEXT NOT NULL DEFAULT 'ask' CHECK (approval IN ('ask', 'allow')),
  enabled INTEGER NOT NULL DEFAULT 1,
  updated_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  PRIMARY KEY (owner_id, name)
);
