/**
 * The search family's SQL for the merged graph: entities, relationships, communities, reports and their
 * FTS5 indexes (BM25), written whole on each indexing run and read by the query services. Every
 * statement is scoped by owner and index. SQL only.
 */
import type { Store } from "../../storage/store.ts";
import type {
  EntityRow,
  IndexRow,
  MergedEntity,
  MergedRelationship,
  RelationshipRow,
  Report,
  ReportRow,
} from "../types.ts";
import { countInIndex, placeholders } from "./sql.ts";

export interface StoredCommunity {
  id: number;
  human_id: number;
  level: number;
  parent_id: number | null;
  entity_ids: string;
  member_hash: string;
}

export class SearchGraphStore {
  constructor(readonly db: Store) {}

  /** Replaces the index's entities and relationships; returns entity ids by name key. */
  replaceGraph(
    index: IndexRow,
    entities: MergedEntity[],
    relationships: MergedRelationship[],
  ): Map<string, number> {
    const scope = [index.id, index.owner_id];
    // Citation ids stay put across incremental runs: an entity or relationship that survives keeps its
    // human id (so a kept report's [Data: …] still points at it), and a new one takes the next free id.
    const entityIds = this.previousIds("search_entities", "name", index);
    const relationshipIds = this.previousIds("search_relationships", "source || char(0) || target", index);
    this.db.run("DELETE FROM search_entities_fts WHERE index_id = ? AND owner_id = ?", scope);
    this.db.run("DELETE FROM search_relationships_fts WHERE index_id = ? AND owner_id = ?", scope);
    this.db.run("DELETE FROM search_entities WHERE index_id = ? AND owner_id = ?", scope);
    this.db.run("DELETE FROM search_relationships WHERE index_id = ? AND owner_id = ?", scope);
    const ids = new Map<string, number>();
    const names = new Map(entities.map((e) => [e.key, e.name]));
    entities.forEach((e) => {
      const human = entityIds(e.name);
      const { lastInsertRowid: id } = this.db.run(
        `INSERT INTO search_entities (index_id, owner_id, human_id, name, type, description, degree, mentions, unit_ids)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [...scope, human, e.name, e.type, e.description, e.degree, e.mentions, JSON.stringify(e.unitIds)],
      );
      this.db.run(
        "INSERT INTO search_entities_fts (rowid, name, description, owner_id, index_id) VALUES (?, ?, ?, ?, ?)",
        [id, e.name, e.description, index.owner_id, index.id],
      );
      ids.set(e.key, id);
    });
    relationships.forEach((r) => {
      const human = relationshipIds(
        `${names.get(r.source) ?? r.source}\u0000${names.get(r.target) ?? r.target}`,
      );
      const { lastInsertRowid: id } = this.db.run(
        `INSERT INTO search_relationships (index_id, owner_id, human_id, source_id, target_id, source, target, description, weight, rank, unit_ids)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          ...scope,
          human,
          ids.get(r.source) as number,
          ids.get(r.target) as number,
          names.get(r.source) ?? r.source,
          names.get(r.target) ?? r.target,
          r.description,
          r.weight,
          r.rank,
          JSON.stringify(r.unitIds),
        ],
      );
      this.db.run(
        "INSERT INTO search_relationships_fts (rowid, description, owner_id, index_id) VALUES (?, ?, ?, ?)",
        [id, `${r.source} ${r.target} ${r.description}`, index.owner_id, index.id],
      );
    });
    return ids;
  }

  /** Old reports by member hash, so that an unchanged community keeps its (possibly model-written) report. */
  /** Human ids by key as the index has them now, and a function giving a key its id (kept, or the next free). */
  private previousIds(table: string, key: string, index: IndexRow): (key: string) => number {
    const rows = this.db.all<{ k: string; human_id: number }>(
      `SELECT ${key} AS k, human_id FROM ${table} WHERE index_id = ? AND owner_id = ?`,
      [index.id, index.owner_id],
    );
    const kept = new Map(rows.map((r) => [r.k, r.human_id]));
    const taken = new Set<number>();
    let next = rows.reduce((max, r) => Math.max(max, r.human_id + 1), 0);
    return (k) => {
      const id = kept.get(k);
      if (id !== undefined && !taken.has(id)) {
        taken.add(id);
        return id;
      }
      taken.add(next);
      return next++;
    };
  }

  reportsByHash(index: IndexRow): Map<string, Report> {
    const rows = this.db.all<ReportRow & { member_hash: string }>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ?",
      [index.id, index.owner_id],
    );
    return new Map(rows.map((r) => [r.member_hash, toReport(r)]));
  }

  clearCommunities(index: IndexRow): void {
    const scope = [index.id, index.owner_id];
    this.db.run("DELETE FROM search_reports_fts WHERE index_id = ? AND owner_id = ?", scope);
    this.db.run("DELETE FROM search_reports WHERE index_id = ? AND owner_id = ?", scope);
    this.db.run("DELETE FROM search_communities WHERE index_id = ? AND owner_id = ?", scope);
  }

  insertCommunity(
    index: IndexRow,
    c: { human: number; level: number; parentId: number | null; entityIds: number[]; hash: string },
  ): number {
    return this.db.run(
      `INSERT INTO search_communities (index_id, owner_id, human_id, level, parent_id, entity_ids, member_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [index.id, index.owner_id, c.human, c.level, c.parentId, JSON.stringify(c.entityIds), c.hash],
    ).lastInsertRowid;
  }

  setEntityCommunities(index: IndexRow, entityId: number, communityIds: number[]): void {
    this.db.run("UPDATE search_entities SET community_ids = ? WHERE id = ? AND owner_id = ?", [
      JSON.stringify(communityIds),
      entityId,
      index.owner_id,
    ]);
  }

  insertReport(
    index: IndexRow,
    r: {
      communityId: number;
      human: number;
      level: number;
      leaf: boolean;
      report: Report;
      content: string;
      hash: string;
    },
  ): void {
    const { lastInsertRowid: id } = this.db.run(
      `INSERT INTO search_reports (index_id, owner_id, community_id, human_id, level, title, summary, rating, rating_explanation, findings, content, member_hash, leaf)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        index.id,
        index.owner_id,
        r.communityId,
        r.human,
        r.level,
        r.report.title,
        r.report.summary,
        r.report.rating,
        r.report.rating_explanation,
        JSON.stringify(r.report.findings),
        r.content,
        r.hash,
        r.leaf ? 1 : 0,
      ],
    );
    this.db.run(
      "INSERT INTO search_reports_fts (rowid, title, content, owner_id, index_id, level, leaf) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [id, r.report.title, r.content, index.owner_id, index.id, r.level, r.leaf ? 1 : 0],
    );
  }

  // ---- reads for the query services ----

  counts(index: IndexRow): { entities: number; relationships: number; communities: number; reports: number } {
    const n = (table: string) => countInIndex(this.db, table, index);
    return {
      entities: n("search_entities"),
      relationships: n("search_relationships"),
      communities: n("search_communities"),
      reports: n("search_reports"),
    };
  }

  /** Entity ids ranked by BM25 over name (weighted 10×) and description. */
  matchEntities(index: IndexRow, match: string, limit: number): { id: number; score: number }[] {
    return this.db.all<{ id: number; score: number }>(
      `SELECT rowid AS id, bm25(search_entities_fts, 10.0, 1.0) AS score FROM search_entities_fts
       WHERE search_entities_fts MATCH ? AND index_id = ? AND owner_id = ? ORDER BY score LIMIT ?`,
      [match, index.id, index.owner_id, limit],
    );
  }

  entities(index: IndexRow, ids: number[]): EntityRow[] {
    return this.byIds<EntityRow>("search_entities", index, ids);
  }

  /** The types the index gave these names (exact stored names), for typing the names a passage mentions. */
  entityTypes(index: IndexRow, names: string[]): Map<string, string> {
    if (names.length === 0) return new Map();
    const rows = this.db.db
      .query<{ name: string; type: string }, (string | number)[]>(
        `SELECT name, type FROM search_entities WHERE index_id = ? AND name IN (${placeholders(names.length)}) AND owner_id = ?`,
      )
      .all(index.id, ...names, index.owner_id);
    return new Map(rows.map((r) => [r.name, r.type]));
  }

  allEntities(index: IndexRow): EntityRow[] {
    return this.db.all<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND owner_id = ? ORDER BY human_id",
      [index.id, index.owner_id],
    );
  }

  /** The drawable columns of the `limit` most connected entities (the graph view). */
  graphEntities(
    index: IndexRow,
    limit: number,
  ): Pick<EntityRow, "id" | "human_id" | "name" | "type" | "degree" | "community_ids">[] {
    return this.db.all(
      `SELECT id, human_id, name, type, degree, community_ids FROM search_entities
       WHERE index_id = ? AND owner_id = ? ORDER BY degree DESC, mentions DESC, human_id LIMIT ?`,
      [index.id, index.owner_id, limit],
    );
  }

  /** Every relationship's ends and weight, heaviest first (the graph view's edges). */
  graphEdges(index: IndexRow): { source_id: number; target_id: number; weight: number }[] {
    return this.db.all(
      `SELECT source_id, target_id, weight FROM search_relationships
       WHERE index_id = ? AND owner_id = ? ORDER BY weight DESC, human_id`,
      [index.id, index.owner_id],
    );
  }

  entityByHumanId(index: IndexRow, humanId: number): EntityRow | undefined {
    return this.db.get<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND human_id = ? AND owner_id = ?",
      [index.id, humanId, index.owner_id],
    );
  }

  /** Relationships with either end in `ids`, heaviest first. */
  relationshipsTouching(index: IndexRow, ids: number[], limit: number): RelationshipRow[] {
    if (ids.length === 0) return [];
    const list = placeholders(ids.length);
    return this.db.db
      .query<RelationshipRow, (string | number)[]>(
        `SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? AND source_id IN (${list})
         UNION
         SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? AND target_id IN (${list})
         ORDER BY weight DESC, rank DESC LIMIT ?`,
      )
      .all(index.id, index.owner_id, ...ids, index.id, index.owner_id, ...ids, limit);
  }

  allRelationships(index: IndexRow): RelationshipRow[] {
    return this.db.all<RelationshipRow>(
      "SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? ORDER BY human_id",
      [index.id, index.owner_id],
    );
  }

  communities(index: IndexRow): StoredCommunity[] {
    return this.db.all<StoredCommunity>(
      "SELECT id, human_id, level, parent_id, entity_ids, member_hash FROM search_communities WHERE index_id = ? AND owner_id = ? ORDER BY level, human_id",
      [index.id, index.owner_id],
    );
  }

  reportsForCommunities(index: IndexRow, communityIds: number[]): ReportRow[] {
    if (communityIds.length === 0) return [];
    return this.db.db
      .query<ReportRow, (string | number)[]>(
        `SELECT * FROM search_reports WHERE community_id IN (${placeholders(communityIds.length)}) AND +index_id = ? AND owner_id = ?`,
      )
      .all(...communityIds, index.id, index.owner_id);
  }

  /** The most mentioned entities of one type: the main characters, the main places (read in index order: no sort). */
  leadingEntities(index: IndexRow, type: string, limit: number): EntityRow[] {
    return this.db.all<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND type = ? AND owner_id = ? ORDER BY mentions DESC LIMIT ?",
      [index.id, type, index.owner_id, limit],
    );
  }

  /** Reports of one level, the most important (rating) first. */
  topReports(index: IndexRow, level: number, limit: number): ReportRow[] {
    return this.db.all<ReportRow>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ? AND level = ? ORDER BY rating DESC LIMIT ?",
      [index.id, index.owner_id, level, limit],
    );
  }

  reportsAtLevel(index: IndexRow, level: number): ReportRow[] {
    return this.db.all<ReportRow>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ? AND level = ? ORDER BY human_id",
      [index.id, index.owner_id, level],
    );
  }

  /** The reports of the partition at `level`: its communities plus the leaves of shallower levels. */
  reportsInPartition(index: IndexRow, level: number): ReportRow[] {
    return this.db.all<ReportRow>(
      `SELECT r.* FROM search_reports r WHERE r.index_id = ? AND r.owner_id = ? AND ${IN_PARTITION} ORDER BY r.human_id`,
      [index.id, index.owner_id, level, level],
    );
  }

  /** Reports of the partition at `level` ranked by BM25 over title (weighted 5×) and content. */
  matchReports(
    index: IndexRow,
    match: string,
    level: number,
    limit: number,
  ): (ReportRow & { score: number })[] {
    const ranked = this.db.all<{ id: number; score: number }>(
      `SELECT rowid AS id, bm25(search_reports_fts, 5.0, 1.0) AS score FROM search_reports_fts
       WHERE search_reports_fts MATCH ? AND index_id = ? AND owner_id = ? AND (level = ? OR (level < ? AND leaf = 1))
       ORDER BY score LIMIT ?`,
      [match, index.id, index.owner_id, level, level, limit],
    );
    const rows = new Map(
      this.byIds<ReportRow>(
        "search_reports",
        index,
        ranked.map((r) => r.id),
      ).map((r) => [r.id, r]),
    );
    return ranked.flatMap(({ id, score }) => {
      const row = rows.get(id);
      return row ? [{ ...row, score }] : [];
    });
  }

  /**
   * How common a term is among all stored reports (every index: only used to choose which query terms are
   * worth ranking by, never shown), against how many reports there are.
   */
  reportTermShare(match: string): number {
    const total = this.db.get<{ n: number }>("SELECT count(*) AS n FROM search_reports")?.n ?? 0;
    // Below a thousand reports, scoring them all is cheap: every term is worth ranking by.
    if (total < 1000) return 0;
    const hits =
      this.db.get<{ n: number }>(
        "SELECT count(*) AS n FROM search_reports_fts WHERE search_reports_fts MATCH ?",
        [match],
      )?.n ?? 0;
    return hits / total;
  }

  maxLevel(index: IndexRow): number {
    return (
      this.db.get<{ level: number | null }>(
        "SELECT max(level) AS level FROM search_reports WHERE index_id = ? AND owner_id = ?",
        [index.id, index.owner_id],
      )?.level ?? -1
    );
  }

  private byIds<T>(table: string, index: IndexRow, ids: number[]): T[] {
    if (ids.length === 0) return [];
    return this.db.db
      .query<T, (string | number)[]>(
        `SELECT * FROM ${table} WHERE id IN (${placeholders(ids.length)}) AND +index_id = ? AND owner_id = ?`,
      )
      .all(...ids, index.id, index.owner_id);
  }
}

/** A report (alias r) belongs to the partition at level ?: at that level, or a leaf above it. */
const IN_PARTITION = "(r.level = ? OR (r.level < ? AND r.leaf = 1))";

export function toReport(row: ReportRow): Report {
  return {
    title: row.title,
    summary: row.summary,
    rating: row.rating,
    rating_explanation: row.rating_explanation,
    findings: JSON.parse(row.findings),
  };
}
