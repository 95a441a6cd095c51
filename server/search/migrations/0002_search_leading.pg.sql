-- PostgreSQL twin of 0002_search_leading.sql.
CREATE INDEX search_entities_leading ON search_entities (index_id, type, mentions);
CREATE INDEX search_reports_rating ON search_reports (index_id, level, rating);
