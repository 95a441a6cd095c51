-- PostgreSQL twin of 0004_search_entity_names.sql.
CREATE INDEX search_entities_name ON search_entities (index_id, name);
