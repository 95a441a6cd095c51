/**
 * The search family's SQL for indexes, documents, text units and raw extractions. Every statement is
 * scoped by owner (and index); the graph tables are in graph-store.ts. SQL only.
 */
import type { Store } from "../../storage/store.ts";
import type { Extraction, ExtractionRecord, IndexRow, UnitRow } from "../types.ts";
import { countInIndex, placeholders } from "./sql.ts";

export interface DocumentRow {
  id: number;
  title: string;
  content_hash: string;
  chars: number;
}

export class SearchStore {
  constructor(readonly db: Store) {}

  findIndex(ownerId: string, name: string): IndexRow | undefined {
    return this.db.get<IndexRow>("SELECT * FROM search_indexes WHERE owner_id = ? AND name = ?", [
      ownerId,
      name,
    ]);
  }

  ensureIndex(ownerId: string, name: string): IndexRow {
    this.db.run(
      "INSERT INTO search_indexes (owner_id, name) VALUES (?, ?) ON CONFLICT (owner_id, name) DO NOTHING",
      [ownerId, name],
    );
    return this.findIndex(ownerId, name) as IndexRow;
  }

  listIndexes(ownerId: string): IndexRow[] {
    return this.db.all<IndexRow>("SELECT * FROM search_indexes WHERE owner_id = ? ORDER BY name", [ownerId]);
  }

  saveStats(index: IndexRow, stats: unknown): void {
    this.db.run(
      "UPDATE search_indexes SET stats = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND owner_id = ?",
      [JSON.stringify(stats), index.id, index.owner_id],
    );
  }

  findDocument(index: IndexRow, title: string): DocumentRow | undefined {
    return this.db.get<DocumentRow>(
      "SELECT id, title, content_hash, chars FROM search_documents WHERE index_id = ? AND owner_id = ? AND title = ?",
      [index.id, index.owner_id, title],
    );
  }

  countDocuments(index: IndexRow): number {
    return countInIndex(this.db, "search_documents", index);
  }

  countUnits(index: IndexRow): number {
    return countInIndex(this.db, "search_units", index);
  }

  /** The index's documents by title, with their sizes (the UI's and the CLI's document list). */
  listDocuments(index: IndexRow): { name: string; chars: number; units: number; indexed_at: string }[] {
    return this.db.all(
      `SELECT d.title AS name, d.chars, d.indexed_at, (SELECT count(*) FROM search_units u WHERE u.document_id = d.id) AS units
       FROM search_documents d WHERE d.index_id = ? AND d.owner_id = ? ORDER BY d.title`,
      [index.id, index.owner_id],
    );
  }

  /** The tokens of every unit of the index (how much text it holds). */
  countTokens(index: IndexRow): number {
    return (
      this.db.get<{ n: number | null }>(
        "SELECT sum(tokens) AS n FROM search_units WHERE index_id = ? AND owner_id = ?",
        [index.id, index.owner_id],
      )?.n ?? 0
    );
  }

  /** Removes a document with its units and their extractions (and the units' FTS rows). */
  deleteDocument(index: IndexRow, documentId: number): void {
    this.db.run(
      "DELETE FROM search_units_fts WHERE rowid IN (SELECT id FROM search_units WHERE document_id = ? AND owner_id = ?)",
      [documentId, index.owner_id],
    );
    this.db.run("DELETE FROM search_documents WHERE id = ? AND index_id = ? AND owner_id = ?", [
      documentId,
      index.id,
      index.owner_id,
    ]);
  }

  /** Inserts a document and its units; returns the units with their ids. */
  insertDocument(
    index: IndexRow,
    doc: { title: string; hash: string; chars: number },
    units: { text: string; tokens: number }[],
  ): UnitRow[] {
    const { lastInsertRowid: documentId } = this.db.run(
      "INSERT INTO search_documents (index_id, owner_id, title, content_hash, chars) VALUES (?, ?, ?, ?, ?)",
      [index.id, index.owner_id, doc.title, doc.hash, doc.chars],
    );
    return units.map((unit, ordinal) => {
      const { lastInsertRowid: id } = this.db.run(
        "INSERT INTO search_units (index_id, owner_id, document_id, ordinal, text, tokens) VALUES (?, ?, ?, ?, ?, ?)",
        [index.id, index.owner_id, documentId, ordinal, unit.text, unit.tokens],
      );
      this.db.run("INSERT INTO search_units_fts (rowid, text, owner_id, index_id) VALUES (?, ?, ?, ?)", [
        id,
        unit.text,
        index.owner_id,
        index.id,
      ]);
      return { id, document_id: documentId, ordinal, text: unit.text, tokens: unit.tokens };
    });
  }

  insertExtraction(index: IndexRow, unitId: number, extraction: Extraction): void {
    const sql =
      "INSERT INTO search_extractions (index_id, owner_id, unit_id, kind, name, target, type, description, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    for (const e of extraction.entities) {
      this.db.run(sql, [
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
      this.db.run(sql, [
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

  extractions(index: IndexRow): ExtractionRecord[] {
    return this.db.all<ExtractionRecord>(
      "SELECT unit_id, kind, name, target, type, description, weight FROM search_extractions WHERE index_id = ? AND owner_id = ? ORDER BY id",
      [index.id, index.owner_id],
    );
  }

  /** Units by id, with their document's title (the `sources` table). */
  units(index: IndexRow, ids: number[]): (UnitRow & { title: string })[] {
    if (ids.length === 0) return [];
    return this.db.db
      .query<UnitRow & { title: string }, (string | number)[]>(
        `SELECT u.id, u.document_id, u.ordinal, u.text, u.tokens, d.title FROM search_units u
         JOIN search_documents d ON d.id = u.document_id
         WHERE u.index_id = ? AND u.owner_id = ? AND u.id IN (${placeholders(ids.length)})`,
      )
      .all(index.id, index.owner_id, ...ids);
  }

  /**
   * In how many of the index's units a term occurs (FTS5, Porter stems), counted up to `cap`: enough to
   * tell a rare word from a common one without reading a common word's every row.
   */
  unitTermCount(index: IndexRow, term: string, cap: number): number {
    return (
      this.db.get<{ n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM search_units_fts WHERE search_units_fts MATCH ? AND index_id = ? AND owner_id = ? LIMIT ?)`,
        [`"${term.replace(/"/g, "")}"`, index.id, index.owner_id, cap],
      )?.n ?? 0
    );
  }

  /** The number of units of each document, so a unit's place in its document is known. */
  documentUnitCounts(index: IndexRow, documentIds: number[]): Map<number, number> {
    if (documentIds.length === 0) return new Map();
    const rows = this.db.db
      .query<{ document_id: number; n: number }, (string | number)[]>(
        `SELECT document_id, max(ordinal) + 1 AS n FROM search_units WHERE document_id IN (${placeholders(documentIds.length)}) AND index_id = ? AND owner_id = ? GROUP BY document_id`,
      )
      .all(...documentIds, index.id, index.owner_id);
    return new Map(rows.map((r) => [r.document_id, r.n]));
  }

  /** The first or last units of a document ("at the end of the story" reads its last pages). */
  edgeUnits(index: IndexRow, documentId: number, end: "start" | "end", count: number): number[] {
    return this.db
      .all<{ id: number }>(
        `SELECT id FROM search_units WHERE document_id = ? AND index_id = ? AND owner_id = ? ORDER BY ordinal ${end === "end" ? "DESC" : "ASC"} LIMIT ?`,
        [documentId, index.id, index.owner_id, count],
      )
      .map((r) => r.id);
  }

  /** Unit ids ranked by BM25 over their text. */
  searchUnits(index: IndexRow, match: string, limit: number): number[] {
    return this.db
      .all<{ id: number }>(
        `SELECT rowid AS id FROM search_units_fts WHERE search_units_fts MATCH ? AND index_id = ? AND owner_id = ?
         ORDER BY bm25(search_units_fts) LIMIT ?`,
        [match, index.id, index.owner_id, limit],
      )
      .map((r) => r.id);
  }
}
