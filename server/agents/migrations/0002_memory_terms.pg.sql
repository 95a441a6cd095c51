-- Memory search's postings on PostgreSQL: one row per (entry, lexeme) with the term's frequency, so BM25
-- reads the few rows of the query's terms instead of unnesting every matching entry's tsvector (that was
-- most of a search's time; docs/benchmarks.md "Families on PostgreSQL"). `tf` weighs a tag's occurrence
-- half of a content one, as FTS5's bm25(memory_fts, 1.0, 0.5) does; `len` is the entry's (BM25's
-- document length), copied so a search reads nothing else of the entry to score it. A trigger keeps the
-- rows in step with content and tags (len changes only with them); deleting the entry deletes them.

CREATE TABLE memory_terms (
  memory_id TEXT NOT NULL REFERENCES memory_entries (id) ON DELETE CASCADE,
  lexeme TEXT NOT NULL,
  tf DOUBLE PRECISION NOT NULL,
  len INTEGER NOT NULL,
  PRIMARY KEY (memory_id, lexeme)
);
CREATE INDEX memory_terms_lexeme ON memory_terms (lexeme);

CREATE FUNCTION memory_terms_of(content TEXT, tags TEXT) RETURNS TABLE (lexeme TEXT, tf DOUBLE PRECISION)
LANGUAGE sql STABLE AS $$
  SELECT x.lexeme, sum(x.tf) FROM (
    SELECT u.lexeme, array_length(u.positions, 1)::float8 AS tf FROM unnest(to_tsvector('atrium_english', content)) u
    UNION ALL
    SELECT u.lexeme, 0.5 * array_length(u.positions, 1) FROM unnest(to_tsvector('atrium_english', tags)) u
  ) x GROUP BY x.lexeme
$$;

CREATE FUNCTION memory_terms_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM memory_terms WHERE memory_id = OLD.id;
  END IF;
  INSERT INTO memory_terms (memory_id, lexeme, tf, len)
    SELECT NEW.id, t.lexeme, t.tf, NEW.len FROM memory_terms_of(NEW.content, NEW.tags) t;
  RETURN NULL;
END $$;
CREATE TRIGGER memory_terms_aiu AFTER INSERT OR UPDATE OF content, tags ON memory_entries
  FOR EACH ROW EXECUTE FUNCTION memory_terms_sync();

-- Entries written before this migration.
INSERT INTO memory_terms (memory_id, lexeme, tf, len)
  SELECT m.id, t.lexeme, t.tf, m.len FROM memory_entries m CROSS JOIN LATERAL memory_terms_of(m.content, m.tags) t;
