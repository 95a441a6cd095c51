-- Agents, fleets (and their ordered members), memory with its FTS5 index, chat sessions and messages.
-- owner_id is the user every row belongs to; a memory entry's agent or fleet is its holder.

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  capabilities TEXT NOT NULL DEFAULT '[]',
  model TEXT,
  instructions TEXT NOT NULL DEFAULT '',
  config TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'active',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX agents_owner ON agents (owner_id, created_at);

CREATE TABLE fleets (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL,
  coordination_pattern TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'active',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX fleets_owner ON fleets (owner_id, created_at);

-- Members in order: the order is the sequential pattern's order.
CREATE TABLE fleet_agents (
  owner_id TEXT NOT NULL,
  fleet_id TEXT NOT NULL REFERENCES fleets (id) ON DELETE CASCADE,
  agent_id TEXT NOT NULL REFERENCES agents (id),
  position INTEGER NOT NULL,
  PRIMARY KEY (fleet_id, agent_id)
);
CREATE INDEX fleet_agents_agent ON fleet_agents (agent_id);

CREATE TABLE memory_entries (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  holder_id TEXT NOT NULL,
  holder_type TEXT NOT NULL,
  type TEXT NOT NULL,
  content TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  importance REAL NOT NULL DEFAULT 0.5,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX memory_holder ON memory_entries (owner_id, holder_id, importance DESC);

-- External-content FTS5 index over memory content and tags, kept in step by triggers.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
  content, tags, owner_id UNINDEXED,
  content = 'memory_entries', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
CREATE TRIGGER memory_ai AFTER INSERT ON memory_entries BEGIN
  INSERT INTO memory_fts (rowid, content, tags, owner_id) VALUES (new.rowid, new.content, new.tags, new.owner_id);
END;
CREATE TRIGGER memory_ad AFTER DELETE ON memory_entries BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content, tags, owner_id)
  VALUES ('delete', old.rowid, old.content, old.tags, old.owner_id);
END;
CREATE TRIGGER memory_au AFTER UPDATE OF content, tags ON memory_entries BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content, tags, owner_id)
  VALUES ('delete', old.rowid, old.content, old.tags, old.owner_id);
  INSERT INTO memory_fts (rowid, content, tags, owner_id) VALUES (new.rowid, new.content, new.tags, new.owner_id);
END;

-- One row per (entry, tag), kept by triggers: the all-of tag filter reads an index instead of JSON.
CREATE TABLE memory_tags (
  owner_id TEXT NOT NULL,
  memory_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags (owner_id, tag);
CREATE TRIGGER memory_tags_ai AFTER INSERT ON memory_entries BEGIN
  INSERT OR IGNORE INTO memory_tags (owner_id, memory_id, tag) SELECT new.owner_id, new.id, value FROM json_each(new.tags);
END;
CREATE TRIGGER memory_tags_ad AFTER DELETE ON memory_entries BEGIN
  DELETE FROM memory_tags WHERE memory_id = old.id;
END;
CREATE TRIGGER memory_tags_au AFTER UPDATE OF tags ON memory_entries BEGIN
  DELETE FROM memory_tags WHERE memory_id = old.id;
  INSERT OR IGNORE INTO memory_tags (owner_id, memory_id, tag) SELECT new.owner_id, new.id, value FROM json_each(new.tags);
END;

CREATE TABLE agent_sessions (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  target_id TEXT NOT NULL,
  target_type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  config TEXT NOT NULL DEFAULT '{}',
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  last_message_at TEXT,
  ended_at TEXT
);
CREATE INDEX agent_sessions_owner ON agent_sessions (owner_id, created_at);

CREATE TABLE agent_messages (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'text',
  content TEXT NOT NULL,
  sender TEXT NOT NULL,
  receiver TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  thread_id TEXT,
  parent_id TEXT,
  timestamp TEXT NOT NULL
);
CREATE UNIQUE INDEX agent_messages_time ON agent_messages (session_id, timestamp);
