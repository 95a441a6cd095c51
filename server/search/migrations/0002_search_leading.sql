-- Global search names the main characters and places: the most mentioned entities of a type, fast.
CREATE INDEX search_entities_leading ON search_entities (index_id, type, mentions);
