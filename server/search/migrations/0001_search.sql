-- Search indexes: one row per (owner, name); everything below belongs to one index and one owner.
CREATE TABLE search_indexes (
  id INTEGER PRIMARY KEY,
  owner_id TEXT NOT NULL,
  name TEXT NOT NULL,
  -- JSON: counts, modularity per level, the options the last run used.
  stats TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (owner_id, name)
);

-- Source documents; content_hash makes re-indexing an unchanged document free.
CREATE TABLE search_documents (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  title TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  chars INTEGER NOT NULL,
  indexed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (index_id, title)
);

-- Text units: token-sized chunks of a document (with overlap).
CREATE TABLE search_units (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  document_id INTEGER NOT NULL REFERENCES search_documents (id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  tokens INTEGER NOT NULL
);
CREATE INDEX search_units_document ON search_units (document_id);

-- What extraction found in one unit, before merging: kept so that only changed units are re-extracted.
CREATE TABLE search_extractions (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  unit_id INTEGER NOT NULL REFERENCES search_units (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('entity', 'relationship')),
  name TEXT NOT NULL,
  target TEXT,
  type TEXT,
  description TEXT NOT NULL,
  weight REAL NOT NULL DEFAULT 1
);
CREATE INDEX search_extractions_unit ON search_extractions (unit_id);
CREATE INDEX search_extractions_index ON search_extractions (index_id);

-- The merged graph. human_id is the short number shown in citations ([Data: Entities (3)]).
CREATE TABLE search_entities (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  human_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  description TEXT NOT NULL,
  degree INTEGER NOT NULL DEFAULT 0,
  mentions INTEGER NOT NULL DEFAULT 0,
  unit_ids TEXT NOT NULL DEFAULT '[]',
  community_ids TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX search_entities_index ON search_entities (index_id, human_id);

CREATE TABLE search_relationships (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  human_id INTEGER NOT NULL,
  source_id INTEGER NOT NULL,
  target_id INTEGER NOT NULL,
  source TEXT NOT NULL,
  target TEXT NOT NULL,
  description TEXT NOT NULL,
  weight REAL NOT NULL,
  rank INTEGER NOT NULL DEFAULT 0,
  unit_ids TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX search_relationships_source ON search_relationships (index_id, source_id);
CREATE INDEX search_relationships_target ON search_relationships (index_id, target_id);

-- Hierarchical communities: level 0 is the coarsest; parent is the enclosing community's id.
CREATE TABLE search_communities (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  human_id INTEGER NOT NULL,
  level INTEGER NOT NULL,
  parent_id INTEGER,
  entity_ids TEXT NOT NULL,
  member_hash TEXT NOT NULL
);
CREATE INDEX search_communities_index ON search_communities (index_id, level);
CREATE INDEX search_communities_parent ON search_communities (parent_id);

-- One report per community (GraphRAG's report shape); member_hash lets an unchanged community keep its report.
CREATE TABLE search_reports (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  community_id INTEGER NOT NULL,
  human_id INTEGER NOT NULL,
  level INTEGER NOT NULL,
  title TEXT NOT NULL,
  summary TEXT NOT NULL,
  rating REAL NOT NULL,
  rating_explanation TEXT NOT NULL,
  findings TEXT NOT NULL,
  content TEXT NOT NULL,
  member_hash TEXT NOT NULL,
  -- 1 when the community has no sub-communities: it then also belongs to every deeper level's partition.
  leaf INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX search_reports_community ON search_reports (community_id);
CREATE INDEX search_reports_level ON search_reports (index_id, level);

-- Full-text indexes (BM25). rowid = the row's id in its table; owner and index scope every match.
CREATE VIRTUAL TABLE search_entities_fts USING fts5 (
  name, description, owner_id UNINDEXED, index_id UNINDEXED, tokenize = 'porter unicode61'
);
CREATE VIRTUAL TABLE search_relationships_fts USING fts5 (
  description, owner_id UNINDEXED, index_id UNINDEXED, tokenize = 'porter unicode61'
);
CREATE VIRTUAL TABLE search_units_fts USING fts5 (
  text, owner_id UNINDEXED, index_id UNINDEXED, tokenize = 'porter unicode61'
);
CREATE VIRTUAL TABLE search_reports_fts USING fts5 (
  title, content, owner_id UNINDEXED, index_id UNINDEXED, level UNINDEXED, leaf UNINDEXED,
  tokenize = 'porter unicode61'
);
