/**
 * Full-text search on PostgreSQL that ranks like SQLite's FTS5: a `tsvector` column with a GIN index,
 * tokenised like FTS5's `porter unicode61` (English stemming, no stopwords, hyphenated words split into
 * their parts), and Okapi BM25 computed in SQL with FTS5's constants (k1 = 1.2, b = 0.75, idf =
 * ln((N - n + 0.5) / (n + 0.5)), at least 1e-6). Plain `ts_rank` has no IDF: rare terms weigh no more than
 * common ones, and its top 10 agreed with FTS5's on 73% of results; bench/text-search.ts measures this.
 *
 * A table searched this way has, besides its text, `tsv tsvector` and `len integer` (the document's
 * token count, BM25's document length), both written with the text (`textSearchValues`).
 */

/** The text search configuration every `tsvector` uses; created by `TEXT_SEARCH_SETUP`. */
export const TS_CONFIG = "atrium_english";

/** DDL for the core scope's first PostgreSQL migration: the configuration above. */
export const TEXT_SEARCH_SETUP = `
CREATE TEXT SEARCH DICTIONARY atrium_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION ${TS_CONFIG} (COPY = english);
ALTER TEXT SEARCH CONFIGURATION ${TS_CONFIG}
  ALTER MAPPING FOR asciiword, word, hword_asciipart, hword_part, numword, hword_numpart WITH atrium_stem;
ALTER TEXT SEARCH CONFIGURATION ${TS_CONFIG} DROP MAPPING FOR asciihword, hword, numhword;
`;

/**
 * `tsv, len` of one bound text parameter, ending in its FROM clause, for an INSERT … SELECT:
 * `INSERT INTO t (id, body, tsv, len) SELECT ?, ?, ${textSearchValues("?")}` (the text bound twice).
 */
export function textSearchValues(param: string): string {
  return `v.tsv, ${textSearchLength("v.tsv")}
    FROM (SELECT to_tsvector('${TS_CONFIG}', ${param}) AS tsv) v`;
}

/** The token count (`len`) of a tsvector expression, as BM25 needs it. */
export function textSearchLength(tsv: string): string {
  return `(SELECT coalesce(sum(array_length(positions, 1)), 0)::int FROM unnest(${tsv}))`;
}

export interface Bm25Options {
  /** The table (or a view) with `tsv` and `len`. */
  table: string;
  /** The columns to return with the score (e.g. `t.id, t.title`); the table is aliased `t`. */
  columns: string;
  /** A condition on `t` scoping the collection (owner, index), with its own `?` parameters. */
  where?: string;
  limit: number;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/**
 * A BM25 query over `opts.table`: parameters are the query text first, then the `where` parameters
 * four times (statistics, document frequencies, the rare-term count, hits). Any query word matches
 * (OR), as FTS5 does with the words joined by OR. Rows: `opts.columns` and `score` (higher is better),
 * best first.
 */
export function bm25Query(opts: Bm25Options): string {
  if (!IDENT.test(opts.table)) throw new Error(`bm25Query: '${opts.table}' is not a table name`);
  const scope = opts.where ? `(${opts.where})` : "TRUE";
  const limit = Math.max(1, Math.floor(opts.limit));
  return `WITH terms AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('${TS_CONFIG}', ?))
  ), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(t.len), 1)::float8 AS avgdl FROM ${opts.table} t WHERE ${scope}
  ), idf AS MATERIALIZED (
    SELECT terms.lexeme, greatest(ln((stats.n - df.c + 0.5) / (df.c + 0.5)), 1e-6) AS w
    FROM terms CROSS JOIN stats CROSS JOIN LATERAL (
      SELECT count(*)::float8 AS c FROM ${opts.table} t WHERE ${scope} AND t.tsv @@ quote_literal(terms.lexeme)::tsquery
    ) df
  ), query AS MATERIALIZED (
    -- A term in half the documents or more weighs 1e-6 (as in FTS5): a document matching only such
    -- terms cannot outrank one with a rarer term, so when enough documents have a rarer term, only
    -- those are scored (scoring every document that has "the" is what makes this slow).
    SELECT string_agg(quote_literal(lexeme), ' | ') FILTER (WHERE w > 1e-6)::tsquery AS rare,
      string_agg(quote_literal(lexeme), ' | ')::tsquery AS any_term
    FROM idf
  ), enough AS MATERIALIZED (
    SELECT count(*) >= ${limit} AS yes FROM ${opts.table} t, query
    WHERE ${scope} AND query.rare IS NOT NULL AND t.tsv @@ query.rare
  ), hits AS (
    SELECT t.* FROM ${opts.table} t, query, enough
    WHERE ${scope} AND t.tsv @@ (CASE WHEN enough.yes THEN query.rare ELSE query.any_term END)
  )
  SELECT ${opts.columns.replaceAll("t.", "h.")}, (
      SELECT sum(idf.w * (array_length(u.positions, 1) * 2.2)
        / (array_length(u.positions, 1) + 1.2 * (0.25 + 0.75 * h.len / stats.avgdl)))
      FROM unnest(h.tsv) u JOIN idf ON idf.lexeme = u.lexeme
    ) AS score
  FROM hits h CROSS JOIN stats
  ORDER BY score DESC
  LIMIT ${limit}`;
}

export interface Bm25PostingsOptions {
  /** The documents: a table with `id` and `len`, aliased `m`. */
  table: string;
  /** A condition on `m` scoping the collection (owner, filters), with its own `?` parameters. */
  where: string;
  /** The postings table: `(<key>, lexeme, tf, len)`, one row per document and term (`len` the document's). */
  postings: string;
  /** Its column naming the document (`m.id`). */
  key: string;
}

/**
 * BM25 over a postings table, as `WITH` clauses ending in `scored (id, score)`: the scoped documents
 * that have any of the query's terms, `score` higher is better. Parameters: the `where` parameters, then
 * the query text. FTS5's constants and idf as in `bm25Query`; document frequencies and the average
 * length are counted over the scope at query time, so they follow every write.
 *
 * Fast because it reads only the query terms' postings (`bm25Query` unnests every hit's tsvector), and
 * written so that no plan can go quadratic: the postings are found by the scope's ids and the terms as
 * two arrays (the primary key, or the lexeme index), never by joining a set to another whose size the
 * planner guesses; a table searched right after its rows were written has no statistics yet, and the
 * joins were then planned as nested loops over the whole scope (100 ms for 300 memories). But PostgreSQL
 * tests an id against a computed array one element at a time, so in a large scope a term most entries
 * hold costs scope × postings comparisons: above SMALL_SCOPE entries the postings are tested through an
 * IN the planner hashes instead (3,437 memories: 61 → 23 ms). Only one of the two branches runs: the
 * other's one-time filter on the scope's size is false (docs/benchmarks.md "Text search on PostgreSQL").
 */
const SMALL_SCOPE = 1000;

export function bm25Postings(opts: Bm25PostingsOptions): string {
  for (const name of [opts.table, opts.postings, opts.key])
    if (!IDENT.test(name)) throw new Error(`bm25Postings: '${name}' is not a name`);
  return `WITH scope AS MATERIALIZED (
    SELECT m.id, m.len FROM ${opts.table} m WHERE ${opts.where}
  ), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(len), 1)::float8 AS avgdl, array_agg(id) AS ids FROM scope
  ), terms AS MATERIALIZED (
    SELECT ARRAY(SELECT DISTINCT lexeme FROM unnest(to_tsvector('${TS_CONFIG}', ?))) AS lexemes
  ), hits AS MATERIALIZED (
    SELECT p.${opts.key} AS id, p.lexeme, p.tf, p.len FROM ${opts.postings} p
    WHERE (SELECT n FROM stats) <= ${SMALL_SCOPE} AND p.${opts.key} = ANY ((SELECT ids FROM stats)::text[])
      AND p.lexeme = ANY ((SELECT lexemes FROM terms)::text[])
    UNION ALL
    SELECT p.${opts.key}, p.lexeme, p.tf, p.len FROM ${opts.postings} p
    WHERE (SELECT n FROM stats) > ${SMALL_SCOPE} AND p.${opts.key} IN (SELECT id FROM scope)
      AND p.lexeme = ANY ((SELECT lexemes FROM terms)::text[])
  ), idf AS MATERIALIZED (
    SELECT hits.lexeme, greatest(ln((stats.n - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS w
    FROM hits CROSS JOIN stats GROUP BY hits.lexeme, stats.n
  ), scored AS MATERIALIZED (
    SELECT hits.id, sum(idf.w * (hits.tf * 2.2) / (hits.tf + 1.2 * (0.25 + 0.75 * hits.len / stats.avgdl))) AS score
    FROM hits JOIN idf ON idf.lexeme = hits.lexeme CROSS JOIN stats GROUP BY hits.id
  )`;
}
