-- Offline answers type the names a passage mentions by what the index knows of them (person, place, …):
-- one lookup of a few names per question, by name within the index.
CREATE INDEX search_entities_name ON search_entities (index_id, name);
