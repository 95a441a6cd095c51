-- PostgreSQL twin of 0001_agents.sql. Memory's FTS5 index becomes a `tsv` column (content and tags in
-- one tsvector, atrium_english as FTS5's porter unicode61) with its token count `len` for BM25 and a GIN
-- index; triggers keep `tsv`, `len` and `memory_tags` in step as SQLite's triggers do.

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
  importance DOUBLE PRECISION NOT NULL DEFAULT 0.5,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  tsv tsvector,
  len INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memory_holder ON memory_entries (owner_id, holder_id, importance DESC);
CREATE INDEX memory_tsv ON memory_entries USING GIN (tsv);

CREATE FUNCTION memory_text_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.tsv := to_tsvector('atrium_english', NEW.content || ' ' || NEW.tags);
  NEW.len := (SELECT coalesce(sum(array_length(positions, 1)), 0)::int FROM unnest(NEW.tsv));
  RETURN NEW;
END $$;
CREATE TRIGGER memory_tsv_biu BEFORE INSERT OR UPDATE OF content, tags ON memory_entries
  FOR EACH ROW EXECUTE FUNCTION memory_text_search();

CREATE TABLE memory_tags (
  owner_id TEXT NOT NULL,
  memory_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags (owner_id, tag);

CREATE FUNCTION memory_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM memory_tags WHERE memory_id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO memory_tags (owner_id, memory_id, tag)
      SELECT NEW.owner_id, NEW.id, value FROM json_array_elements_text(NEW.tags::json)
      ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER memory_tags_ai AFTER INSERT ON memory_entries FOR EACH ROW EXECUTE FUNCTION memory_tags_sync();
CREATE TRIGGER memory_tags_ad AFTER DELETE ON memory_entries FOR EACH ROW EXECUTE FUNCTION memory_tags_sync();
CREATE TRIGGER memory_tags_au AFTER UPDATE OF tags ON memory_entries FOR EACH ROW EXECUTE FUNCTION memory_tags_sync();

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
