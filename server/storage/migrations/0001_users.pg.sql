-- Users: the owners of every user-data row. Local mode has the single user 'local'; protected mode adds
-- users as they sign in (session auth) or present a verified bearer token (managed auth).
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
);

INSERT INTO users (id, display_name) VALUES ('local', 'Local user');

-- The text search configuration every tsvector column uses (server/storage/db/text-search.ts, whose
-- TEXT_SEARCH_SETUP this is): English snowball stemming without stopwords, hyphenated words split into
-- their parts, as SQLite's FTS5 `porter unicode61` tokenises. Here, in the first migration of the first
-- scope, so every family's search table finds it.
CREATE TEXT SEARCH DICTIONARY atrium_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION atrium_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION atrium_english
  ALTER MAPPING FOR asciiword, word, hword_asciipart, hword_part, numword, hword_numpart WITH atrium_stem;
ALTER TEXT SEARCH CONFIGURATION atrium_english DROP MAPPING FOR asciihword, hword, numhword;
