/**
 * The search family's SQL for the merged graph: entities, relationships, communities, reports and their
 * full-text rows (BM25: FTS5 on SQLite, tsvector on PostgreSQL, sql.ts), written on each indexing
 * run (entities and relationships only where they changed: graph-writer.ts) and read by the query
 * services, on the database port. Every statement is scoped by owner and
 * index. `tx(fn)` runs `fn` with a store bound to one transaction. SQL only.
 */
import type { Db, Queryable } from "../../storage/db/port.ts";
import { bm25Query } from "../../storage/db/text-search.ts";
import type {
  EntityRow,
  IndexRow,
  MergedEntity,
  MergedRelationship,
  RelationshipRow,
  Report,
  ReportRow,
} from "../types.ts";
import { type CommunityToWrite, writeCommunities } from "./graph-communities.ts";
import { writeMergedGraph } from "./graph-writer.ts";
import { scopeFourTimes } from "./search-store.ts";
import { countInIndex, matchWords, nextUpdatedAt, PG_HAS_TERM, placeholders } from "./sql.ts";

export interface StoredCommunity {
  id: number;
  human_id: number;
  level: number;
  parent_id: number | null;
  entity_ids: string;
  member_hash: string;
}

export class SearchGraphStore {
  constructor(
    readonly db: Db,
    protected readonly q: Queryable = db,
  ) {}

  /** Runs `fn` in one transaction, with a store whose statements go to it. */
  tx<T>(fn: (graph: SearchGraphStore) => Promise<T>): Promise<T> {
    return this.db.tx((tx) => fn(this.bind(tx)));
  }

  /** The same store with its statements going to `q` (an open transaction of the same database). */
  bind(q: Queryable): SearchGraphStore {
    return new SearchGraphStore(this.db, q);
  }

  /**
   * Replaces the index's entities and relationships (only the rows that changed); entity ids by name key.
   * Moves the index's `updated_at` in the same transaction: what queries remember of the index's entities
   * (services/index-stats.ts) is kept per version.
   */
  async replaceGraph(
    index: IndexRow,
    entities: MergedEntity[],
    relationships: MergedRelationship[],
  ): Promise<Map<string, number>> {
    const ids = await writeMergedGraph(this.q, this.db.engine, index, entities, relationships);
    await this.q.run(
      `UPDATE search_indexes SET updated_at = ${nextUpdatedAt(this.db.engine)} WHERE id = ? AND owner_id = ?`,
      [index.id, index.owner_id],
    );
    return ids;
  }

  /** Old reports by member hash, so that an unchanged community keeps its (possibly model-written) report. */
  async reportsByHash(index: IndexRow): Promise<Map<string, Report>> {
    const rows = await this.q.all<ReportRow & { member_hash: string }>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ?",
      [index.id, index.owner_id],
    );
    return new Map(rows.map((r) => [r.member_hash, toReport(r)]));
  }

  /**
   * Replaces the index's communities and reports (only the rows that changed: graph-communities.ts) and
   * sets the entities' community lists where they changed; how many communities kept their rows.
   */
  replaceCommunities(
    index: IndexRow,
    list: CommunityToWrite[],
    current: Map<number, string>,
  ): Promise<{ kept: number }> {
    return writeCommunities(this.q, this.db.engine, index, list, current);
  }

  // ---- reads for the query services ----

  async counts(
    index: IndexRow,
  ): Promise<{ entities: number; relationships: number; communities: number; reports: number }> {
    const n = (table: string) => countInIndex(this.q, table, index);
    return {
      entities: await n("search_entities"),
      relationships: await n("search_relationships"),
      communities: await n("search_communities"),
      reports: await n("search_reports"),
    };
  }

  /**
   * Entity ids ranked by BM25 (lower score is better, as FTS5's): on SQLite over name (weighted 10×) and
   * description; on PostgreSQL over both as one text.
   */
  matchEntities(index: IndexRow, match: string, limit: number): Promise<{ id: number; score: number }[]> {
    if (this.db.engine === "sqlite")
      return this.q.all<{ id: number; score: number }>(
        `SELECT rowid AS id, bm25(search_entities_fts, 10.0, 1.0) AS score FROM search_entities_fts
         WHERE search_entities_fts MATCH ? AND index_id = ? AND owner_id = ? ORDER BY score LIMIT ?`,
        [match, index.id, index.owner_id, limit],
      );
    return this.q.all<{ id: number; score: number }>(
      `SELECT id, -score AS score FROM (${bm25Query({
        table: "search_entities_fts",
        columns: "t.id",
        where: "t.index_id = ? AND t.owner_id = ?",
        limit,
      })}) ranked ORDER BY score, id`,
      [matchWords(match), ...scopeFourTimes(index)],
    );
  }

  entities(index: IndexRow, ids: number[]): Promise<EntityRow[]> {
    return this.byIds<EntityRow>("search_entities", index, ids);
  }

  /** The types the index gave these names (exact stored names), for typing the names a passage mentions. */
  async entityTypes(index: IndexRow, names: string[]): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    const rows = await this.q.all<{ name: string; type: string }>(
      `SELECT name, type FROM search_entities WHERE index_id = ? AND name IN (${placeholders(names.length)}) AND owner_id = ?`,
      [index.id, ...names, index.owner_id],
    );
    return new Map(rows.map((r) => [r.name, r.type]));
  }

  allEntities(index: IndexRow): Promise<EntityRow[]> {
    return this.q.all<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND owner_id = ? ORDER BY human_id",
      [index.id, index.owner_id],
    );
  }

  /** The drawable columns of the `limit` most connected entities (the graph view). */
  graphEntities(
    index: IndexRow,
    limit: number,
  ): Promise<Pick<EntityRow, "id" | "human_id" | "name" | "type" | "degree" | "community_ids">[]> {
    return this.q.all(
      `SELECT id, human_id, name, type, degree, community_ids FROM search_entities
       WHERE index_id = ? AND owner_id = ? ORDER BY degree DESC, mentions DESC, human_id LIMIT ?`,
      [index.id, index.owner_id, limit],
    );
  }

  /** Every relationship's ends and weight, heaviest first (the graph view's edges). */
  graphEdges(index: IndexRow): Promise<{ source_id: number; target_id: number; weight: number }[]> {
    return this.q.all(
      `SELECT source_id, target_id, weight FROM search_relationships
       WHERE index_id = ? AND owner_id = ? ORDER BY weight DESC, human_id`,
      [index.id, index.owner_id],
    );
  }

  entityByHumanId(index: IndexRow, humanId: number): Promise<EntityRow | undefined> {
    return this.q.get<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND human_id = ? AND owner_id = ?",
      [index.id, humanId, index.owner_id],
    );
  }

  /** Relationships with either end in `ids`, heaviest first. */
  async relationshipsTouching(index: IndexRow, ids: number[], limit: number): Promise<RelationshipRow[]> {
    if (ids.length === 0) return [];
    const list = placeholders(ids.length);
    return this.q.all<RelationshipRow>(
      `SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? AND source_id IN (${list})
       UNION
       SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? AND target_id IN (${list})
       ORDER BY weight DESC, rank DESC, id LIMIT ?`,
      [index.id, index.owner_id, ...ids, index.id, index.owner_id, ...ids, limit],
    );
  }

  allRelationships(index: IndexRow): Promise<RelationshipRow[]> {
    return this.q.all<RelationshipRow>(
      "SELECT * FROM search_relationships WHERE index_id = ? AND owner_id = ? ORDER BY human_id",
      [index.id, index.owner_id],
    );
  }

  communities(index: IndexRow): Promise<StoredCommunity[]> {
    return this.q.all<StoredCommunity>(
      "SELECT id, human_id, level, parent_id, entity_ids, member_hash FROM search_communities WHERE index_id = ? AND owner_id = ? ORDER BY level, human_id",
      [index.id, index.owner_id],
    );
  }

  async reportsForCommunities(index: IndexRow, communityIds: number[]): Promise<ReportRow[]> {
    if (communityIds.length === 0) return [];
    return this.q.all<ReportRow>(
      `SELECT * FROM search_reports WHERE community_id IN (${placeholders(communityIds.length)}) AND +index_id = ? AND owner_id = ?`,
      [...communityIds, index.id, index.owner_id],
    );
  }

  /**
   * The most mentioned entities of one type: the main characters, the main places (read in index order:
   * no sort; ties newest row first, as the index holds them, on both engines).
   */
  leadingEntities(index: IndexRow, type: string, limit: number): Promise<EntityRow[]> {
    return this.q.all<EntityRow>(
      "SELECT * FROM search_entities WHERE index_id = ? AND type = ? AND owner_id = ? ORDER BY mentions DESC, id DESC LIMIT ?",
      [index.id, type, index.owner_id, limit],
    );
  }

  /**
   * Reports of one level, the most important (rating) first; ties by citation id, last first (the order a
   * build inserts them in, which the rows an update keeps no longer follow).
   */
  topReports(index: IndexRow, level: number, limit: number): Promise<ReportRow[]> {
    return this.q.all<ReportRow>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ? AND level = ? ORDER BY rating DESC, human_id DESC LIMIT ?",
      [index.id, index.owner_id, level, limit],
    );
  }

  reportsAtLevel(index: IndexRow, level: number): Promise<ReportRow[]> {
    return this.q.all<ReportRow>(
      "SELECT * FROM search_reports WHERE index_id = ? AND owner_id = ? AND level = ? ORDER BY human_id",
      [index.id, index.owner_id, level],
    );
  }

  /** The reports of the partition at `level`: its communities plus the leaves of shallower levels. */
  reportsInPartition(index: IndexRow, level: number): Promise<ReportRow[]> {
    return this.q.all<ReportRow>(
      `SELECT r.* FROM search_reports r WHERE r.index_id = ? AND r.owner_id = ? AND ${IN_PARTITION} ORDER BY r.human_id`,
      [index.id, index.owner_id, level, level],
    );
  }

  /**
   * Reports of the partition at `level` ranked by BM25 (lower is better, as FTS5's): on SQLite over title
   * (weighted 5×) and content, on PostgreSQL over both as one text.
   */
  async matchReports(
    index: IndexRow,
    match: string,
    level: number,
    limit: number,
  ): Promise<(ReportRow & { score: number })[]> {
    const ranked =
      this.db.engine === "sqlite"
        ? await this.q.all<{ id: number; score: number }>(
            `SELECT rowid AS id, bm25(search_reports_fts, 5.0, 1.0) AS score FROM search_reports_fts
             WHERE search_reports_fts MATCH ? AND index_id = ? AND owner_id = ? AND (level = ? OR (level < ? AND leaf = 1))
             ORDER BY score LIMIT ?`,
            [match, index.id, index.owner_id, level, level, limit],
          )
        : await this.q.all<{ id: number; score: number }>(
            `SELECT id, -score AS score FROM (${bm25Query({
              table: "search_reports_fts",
              columns: "t.id",
              where: "t.index_id = ? AND t.owner_id = ? AND (t.level = ? OR (t.level < ? AND t.leaf = 1))",
              limit,
            })}) ranked ORDER BY score, id`,
            [matchWords(match), ...scopeFourTimes(index, level, level)],
          );
    const rows = new Map(
      (
        await this.byIds<ReportRow>(
          "search_reports",
          index,
          ranked.map((r) => r.id),
        )
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
  async reportTermShare(match: string): Promise<number> {
    const total = (await this.q.get<{ n: number }>("SELECT count(*) AS n FROM search_reports"))?.n ?? 0;
    // Below a thousand reports, scoring them all is cheap: every term is worth ranking by.
    if (total < 1000) return 0;
    const hits =
      this.db.engine === "sqlite"
        ? await this.q.get<{ n: number }>(
            "SELECT count(*) AS n FROM search_reports_fts WHERE search_reports_fts MATCH ?",
            [match],
          )
        : await this.q.get<{ n: number }>(
            `SELECT count(*) AS n FROM search_reports_fts WHERE ${PG_HAS_TERM}`,
            [matchWords(match)],
          );
    return (hits?.n ?? 0) / total;
  }

  async maxLevel(index: IndexRow): Promise<number> {
    // Highest first through the (index_id, level) index, stopping at the first row: max() with the owner
    // test read every report of the index (a quarter of a global question's time at 23k reports).
    const row = await this.q.get<{ level: number | null }>(
      "SELECT level FROM search_reports WHERE index_id = ? AND owner_id = ? ORDER BY level DESC LIMIT 1",
      [index.id, index.owner_id],
    );
    return row?.level ?? -1;
  }

  private async byIds<T>(table: string, index: IndexRow, ids: number[]): Promise<T[]> {
    if (ids.length === 0) return [];
    return this.q.all<T>(
      `SELECT * FROM ${table} WHERE id IN (${placeholders(ids.length)}) AND +index_id = ? AND owner_id = ?`,
      [...ids, index.id, index.owner_id],
    );
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
