-- Entity embeddings (when the policy names an embeddings endpoint): one vector per distinct text an
-- entity is embedded from ("name: description"), keyed by a hash of the model and that text, so a
-- re-index embeds only what changed. Queried through sqlite-vec's vec_distance_cosine.
ALTER TABLE search_entities ADD COLUMN embed_hash TEXT;
CREATE INDEX search_entities_embed ON search_entities (index_id, embed_hash);
CREATE TABLE search_vectors (
  id INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL,
  model TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE (index_id, text_hash)
);
