-- Nothing changes on SQLite: FTS5 (memory_fts) keeps its own postings and statistics. The PostgreSQL
-- twin adds memory_terms, the per-entry term frequencies that memory search ranks from there.
SELECT 1;
