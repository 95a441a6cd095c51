-- Global search names the main characters and places and reads the most important top-level reports:
-- the most mentioned entities of a type and the best-rated reports of a level, without a sort.
CREATE INDEX search_entities_leading ON search_entities (index_id, type, mentions);
CREATE INDEX search_reports_rating ON search_reports (index_id, level, rating);
