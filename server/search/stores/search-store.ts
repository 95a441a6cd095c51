/**
 * The search family's SQL for indexes, documents, text units and raw extractions, on the database port
 * (SQLite or PostgreSQL). Every statement is scoped by owner (and index); the graph tables are in
 * graph-store.ts. `tx(fn)` runs `fn` with a store bound to one transaction. SQL only.
 */
import type { Database } from "bun:sqlite";
import type { Db, Queryable } from "../../storage/db/port.ts";
import { bm25Query, TS_CONFIG } from "../../storage/db/text-search.ts";
import type { Extraction, ExtractionRecord, IndexRow, UnitRow } from "../types.ts";
import {
  countInIndex,
  ftsRow,
  matchWords,
  nextUpdatedAt,
  PG_HAS_TERM,
  placeholders,
  RowInserter,
} from "./sql.ts";

export interface DocumentRow {
  id: number;
  title: string;
  content_hash: string;
  chars: number;
}

/**
 * The units of an index, counted through their documents: `search_units` has no index on its index id,
 * so counting it by index read every unit's text (27 ms at 20k units, most of a local query's time);
 * the document index counts without reading a row. A unit always belongs to its document's index.
 */
const UNITS_OF_INDEX =
  "SELECT count(*) AS n FROM search_units WHERE document_id IN (SELECT id FROM search_documents WHERE index_id = ? AND owner_id = ?)";

export class SearchStore {
  /**
   * `db` is the port; `sqlite` is the same app.db connection as bun:sqlite when the port is SQLite (the
   * vector store loads sqlite-vec into it); `q` is where statements go (the port, or one transaction).
   */
  constructor(
    readonly db: Db,
    readonly sqlite?: Database,
    protected readonly q: Queryable = db,
  ) {}

  /** Runs `fn` in one transaction, with a store whose statements go to it. */
  tx<T>(fn: (store: SearchStore) => Promise<T>): Promise<T> {
    return this.db.tx((tx) => fn(this.bind(tx)));
  }

  /** The same store with its statements going to `q` (an open transaction of the same database). */
  bind(q: Queryable): SearchStore {
    return new SearchStore(this.db, this.sqlite, q);
  }

  findIndex(ownerId: string, name: string): Promise<IndexRow | undefined> {
    return this.q.get<IndexRow>("SELECT * FROM search_indexes WHERE owner_id = ? AND name = ?", [
      ownerId,
      name,
    ]);
  }

  async ensureIndex(ownerId: string, name: string): Promise<IndexRow> {
    await this.q.run(
      "INSERT INTO search_indexes (owner_id, name) VALUES (?, ?) ON CONFLICT (owner_id, name) DO NOTHING",
      [ownerId, name],
    );
    return (await this.findIndex(ownerId, name)) as IndexRow;
  }

  listIndexes(ownerId: string): Promise<IndexRow[]> {
    return this.q.all<IndexRow>("SELECT * FROM search_indexes WHERE owner_id = ? ORDER BY name", [ownerId]);
  }

  async saveStats(index: IndexRow, stats: unknown): Promise<void> {
    await this.q.run(
      `UPDATE search_indexes SET stats = ?, updated_at = ${nextUpdatedAt(this.db.engine)} WHERE id = ? AND owner_id = ?`,
      [JSON.stringify(stats), index.id, index.owner_id],
    );
  }

  /**
   * A new `updated_at` for the index, with every change of its units (in the change's transaction): what a
   * query remembers of an index (its unit count, term frequencies, document sizes) is kept per version.
   */
  private async touch(index: IndexRow): Promise<void> {
    await this.q.run(
      `UPDATE search_indexes SET updated_at = ${nextUpdatedAt(this.db.engine)} WHERE id = ? AND owner_id = ?`,
      [index.id, index.owner_id],
    );
  }

  findDocument(index: IndexRow, title: string): Promise<DocumentRow | undefined> {
    return this.q.get<DocumentRow>(
      "SELECT id, title, content_hash, chars FROM search_documents WHERE index_id = ? AND owner_id = ? AND title = ?",
      [index.id, index.owner_id, title],
    );
  }

  countDocuments(index: IndexRow): Promise<number> {
    return countInIndex(this.q, "search_documents", index);
  }

  async countUnits(index: IndexRow): Promise<number> {
    return (await this.q.get<{ n: number }>(UNITS_OF_INDEX, [index.id, index.owner_id]))?.n ?? 0;
  }

  /** The index's documents by title, with their sizes (the UI's and the CLI's document list). */
  listDocuments(
    index: IndexRow,
  ): Promise<{ name: string; chars: number; units: number; indexed_at: string }[]> {
    return this.q.all(
      `SELECT d.title AS name, d.chars, d.indexed_at, (SELECT count(*) FROM search_units u WHERE u.document_id = d.id) AS units
       FROM search_documents d WHERE d.index_id = ? AND d.owner_id = ? ORDER BY d.title`,
      [index.id, index.owner_id],
    );
  }

  /** The ids of the index's longest documents, longest first: "the story" of a question that names nothing. */
  async longestDocuments(index: IndexRow, limit: number): Promise<number[]> {
    const rows = await this.q.all<{ id: number }>(
      "SELECT id FROM search_documents WHERE index_id = ? AND owner_id = ? ORDER BY chars DESC, id LIMIT ?",
      [index.id, index.owner_id, limit],
    );
    return rows.map((r) => r.id);
  }

  /** The tokens of every unit of the index (how much text it holds). */
  async countTokens(index: IndexRow): Promise<number> {
    const row = await this.q.get<{ n: number | null }>(
      "SELECT sum(tokens) AS n FROM search_units WHERE index_id = ? AND owner_id = ?",
      [index.id, index.owner_id],
    );
    return row?.n ?? 0;
  }

  /** Removes a document with its units and their extractions (and the units' FTS rows). */
  async deleteDocument(index: IndexRow, documentId: number): Promise<void> {
    // On PostgreSQL the text rows go with their units (ON DELETE CASCADE); FTS5 rows must be deleted.
    if (this.db.engine === "sqlite")
      await this.q.run(
        "DELETE FROM search_units_fts WHERE rowid IN (SELECT id FROM search_units WHERE document_id = ? AND owner_id = ?)",
        [documentId, index.owner_id],
      );
    await this.q.run("DELETE FROM search_documents WHERE id = ? AND index_id = ? AND owner_id = ?", [
      documentId,
      index.id,
      index.owner_id,
    ]);
    await this.touch(index);
  }

  /** Inserts a document and its units; returns the units with their ids. */
  async insertDocument(
    index: IndexRow,
    doc: { title: string; hash: string; chars: number },
    units: { text: string; tokens: number }[],
  ): Promise<UnitRow[]> {
    const { id: documentId } = (await this.q.get<{ id: number }>(
      "INSERT INTO search_documents (index_id, owner_id, title, content_hash, chars) VALUES (?, ?, ?, ?, ?) RETURNING id",
      [index.id, index.owner_id, doc.title, doc.hash, doc.chars],
    )) as { id: number };
    const rows: UnitRow[] = [];
    const inserter = await RowInserter.open(this.q, this.db.engine, "search_units", [
      "index_id",
      "owner_id",
      "document_id",
      "ordinal",
      "text",
      "tokens",
    ]);
    for (const [ordinal, unit] of units.entries()) {
      const id = await inserter.insert([
        index.id,
        index.owner_id,
        documentId,
        ordinal,
        unit.text,
        unit.tokens,
      ]);
      const fts = ftsRow(this.db.engine, "search_units_fts", id, index, { text: unit.text });
      await this.q.run(fts.sql, fts.params);
      rows.push({ id, document_id: documentId, ordinal, text: unit.text, tokens: unit.tokens });
    }
    await this.touch(index);
    return rows;
  }

  async insertExtraction(index: IndexRow, unitId: number, extraction: Extraction): Promise<void> {
    const sql =
      "INSERT INTO search_extractions (index_id, owner_id, unit_id, kind, name, target, type, description, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    for (const e of extraction.entities) {
      await this.q.run(sql, [
        index.id,
        index.owner_id,
        unitId,
        "entity",
        e.name,
        null,
        e.type,
        e.description,
        e.mentions ?? 1,
      ]);
    }
    for (const r of extraction.relationships) {
      await this.q.run(sql, [
        index.id,
        index.owner_id,
        unitId,
        "relationship",
        r.source,
        r.target,
        null,
        r.description,
        r.weight,
      ]);
    }
  }

  /**
   * Every extraction of the index in document order: by title (byte order on both engines), then by unit.
   * Not by row id: a changed document's rows are new, and merging in insertion order would move what it
   * says to the end (an entity's first descriptions would differ from those a rebuild gives it).
   */
  extractions(index: IndexRow): Promise<ExtractionRecord[]> {
    const title = this.db.engine === "postgres" ? 'd.title COLLATE "C"' : "d.title";
    return this.q.all<ExtractionRecord>(
      `SELECT x.unit_id, x.kind, x.name, x.target, x.type, x.description, x.weight FROM search_extractions x
       JOIN search_units u ON u.id = x.unit_id JOIN search_documents d ON d.id = u.document_id
       WHERE x.index_id = ? AND x.owner_id = ? ORDER BY ${title}, u.ordinal, x.id`,
      [index.id, index.owner_id],
    );
  }

  /** Units by id, with their document's title (the `sources` table). */
  async units(index: IndexRow, ids: number[]): Promise<(UnitRow & { title: string })[]> {
    if (ids.length === 0) return [];
    return this.q.all<UnitRow & { title: string }>(
      `SELECT u.id, u.document_id, u.ordinal, u.text, u.tokens, d.title FROM search_units u
       JOIN search_documents d ON d.id = u.document_id
       WHERE u.index_id = ? AND u.owner_id = ? AND u.id IN (${placeholders(ids.length)})`,
      [index.id, index.owner_id, ...ids],
    );
  }

  /**
   * In how many of the index's units each term occurs (stemmed), counted up to `cap`: enough to tell a
   * rare word from a common one without reading a common word's every row. One statement for all terms
   * (a column each), so a question costs one round trip here, not one per word.
   */
  async unitTermCounts(index: IndexRow, terms: string[], cap: number): Promise<number[]> {
    if (terms.length === 0) return [];
    const sqlite = this.db.engine === "sqlite";
    const one = sqlite
      ? "(SELECT count(*) FROM (SELECT 1 FROM search_units_fts WHERE search_units_fts MATCH ? AND index_id = ? AND owner_id = ? LIMIT ?))"
      : `(SELECT count(*) FROM (SELECT 1 FROM search_units_fts WHERE ${PG_HAS_TERM} AND index_id = ? AND owner_id = ? LIMIT ?) c)`;
    const params = terms.flatMap((term) => {
      const word = term.replace(/"/g, "");
      return [sqlite ? `"${word}"` : word, index.id, index.owner_id, cap];
    });
    const row = await this.q.get<Record<string, number>>(
      `SELECT ${terms.map((_, i) => `${one} AS n${i}`).join(", ")}`,
      params,
    );
    return terms.map((_, i) => row?.[`n${i}`] ?? 0);
  }

  /**
   * The number of units of each document, so a unit's place in its document is known. Counted on the
   * document index alone (the documents of the index scope it): `max(ordinal)` read every unit row, text
   * and all (19 ms for three documents of 1,000 units). A document's units are written together with
   * ordinals 0..n-1 and go only with it, so the count is the largest ordinal plus one.
   */
  async documentUnitCounts(index: IndexRow, documentIds: number[]): Promise<Map<number, number>> {
    if (documentIds.length === 0) return new Map();
    const rows = await this.q.all<{ document_id: number; n: number }>(
      `SELECT document_id, count(*) AS n FROM search_units WHERE document_id IN
       (SELECT id FROM search_documents WHERE id IN (${placeholders(documentIds.length)}) AND index_id = ? AND owner_id = ?)
       GROUP BY document_id`,
      [...documentIds, index.id, index.owner_id],
    );
    return new Map(rows.map((r) => [r.document_id, r.n]));
  }

  /** The first or last units of a document ("at the end of the story" reads its last pages). */
  async edgeUnits(
    index: IndexRow,
    documentId: number,
    end: "start" | "end",
    count: number,
  ): Promise<number[]> {
    const rows = await this.q.all<{ id: number }>(
      `SELECT id FROM search_units WHERE document_id = ? AND index_id = ? AND owner_id = ? ORDER BY ordinal ${end === "end" ? "DESC" : "ASC"} LIMIT ?`,
      [documentId, index.id, index.owner_id, count],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Unit ids whose text says one of these phrases word for word (FTS5 phrase queries; PostgreSQL's
   * `phraseto_tsquery`), best BM25 first on SQLite. Phrases are words only (letters and digits).
   */
  async phraseUnits(index: IndexRow, phrases: string[], limit: number): Promise<number[]> {
    const clean = phrases.map((p) => p.replace(/[^\p{L}\p{N} ]/gu, " ").trim()).filter(Boolean);
    if (clean.length === 0 || limit <= 0) return [];
    const rows =
      this.db.engine === "sqlite"
        ? await this.q.all<{ id: number }>(
            `SELECT rowid AS id FROM search_units_fts WHERE search_units_fts MATCH ? AND index_id = ? AND owner_id = ?
             ORDER BY bm25(search_units_fts) LIMIT ?`,
            [clean.map((p) => `"${p}"`).join(" OR "), index.id, index.owner_id, limit],
          )
        : await this.q.all<{ id: number }>(
            `SELECT t.id FROM search_units_fts t WHERE t.index_id = ? AND t.owner_id = ?
             AND (${clean.map(() => `t.tsv @@ phraseto_tsquery('${TS_CONFIG}', ?)`).join(" OR ")}) ORDER BY t.id LIMIT ?`,
            [index.id, index.owner_id, ...clean, limit],
          );
    return rows.map((r) => r.id);
  }

  /** Unit ids ranked by BM25 over their text. */
  async searchUnits(index: IndexRow, match: string, limit: number): Promise<number[]> {
    const rows =
      this.db.engine === "sqlite"
        ? await this.q.all<{ id: number }>(
            `SELECT rowid AS id FROM search_units_fts WHERE search_units_fts MATCH ? AND index_id = ? AND owner_id = ?
             ORDER BY bm25(search_units_fts) LIMIT ?`,
            [match, index.id, index.owner_id, limit],
          )
        : await this.q.all<{ id: number }>(
            bm25Query({
              table: "search_units_fts",
              columns: "t.id",
              where: "t.index_id = ? AND t.owner_id = ?",
              limit,
            }),
            [matchWords(match), ...scopeFourTimes(index)],
          );
    return rows.map((r) => r.id);
  }
}

/** bm25Query's `where` parameters (index, owner), four times over. */
export function scopeFourTimes(index: IndexRow, ...more: (string | number)[]): (string | number)[] {
  const one = [index.id, index.owner_id, ...more];
  return [...one, ...one, ...one, ...one];
}
