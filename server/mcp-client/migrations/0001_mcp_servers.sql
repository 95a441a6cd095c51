-- MCP servers a user added as tools (server/mcp-client/store.ts). `headers` holds the secrets (a token
-- becomes its Authorization header): read only to connect, never into a response, a sandbox or a log.
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
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (owner_id, name)
);
