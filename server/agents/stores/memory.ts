/**
 * SQL for memory entries and their search. Full text goes through the FTS5 index `memory_fts` (porter
 * stemming) ranked by BM25; tags are a JSON array on the row, mirrored into `memory_tags` by triggers,
 * and the filter keeps an entry only when every asked tag is on it. Every statement is scoped by `owner_id`.
 * Over the database port: on PostgreSQL the index is `memory_terms` (each entry's lexemes with their
 * frequency, a tag's counting half as FTS5's column weights do; kept by a trigger, migration 0002) ranked
 * by `bm25Postings`, BM25 with FTS5's constants over the entries the filters keep, in one statement.
 */
import type { MemoryType } from "../../../schemas/agents.ts";
import type { Db, SqlValue } from "../../storage/db/port.ts";
import { bm25Postings, TS_CONFIG } from "../../storage/db/text-search.ts";

export interface MemoryRecord {
  id: string;
  holder_id: string;
  holder_type: "agent" | "fleet";
  type: MemoryType;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  importance: number;
  created_at: string;
  updated_at: string;
}

export interface MemoryFilter {
  holderId?: string;
  holderType?: string;
  /** Holders to search together (an agent and its fleet); overrides holderId. */
  holders?: { id: string; type?: string }[];
  type?: string;
  tags?: string[];
  /** An FTS5 MATCH expression (already built from user words). */
  match?: string;
  limit: number;
  offset: number;
}

type MemoryRow = Omit<MemoryRecord, "tags" | "metadata"> & { tags: string; metadata: string; score?: number };

const COLUMNS =
  "m.id, m.holder_id, m.holder_type, m.type, m.content, m.tags, m.metadata, m.importance, m.created_at, m.updated_at";

function recordOf(row: MemoryRow): MemoryRecord & { score: number | null } {
  const { score, ...rest } = row;
  return {
    ...rest,
    tags: JSON.parse(row.tags),
    metadata: JSON.parse(row.metadata),
    // bm25() is lower-is-better and negative; the API reports higher-is-better.
    score: typeof score === "number" ? -score : null,
  };
}

/**
 * Words of a free-text query as an FTS5 expression: each word quoted (so FTS5 syntax in user text is
 * inert), joined by OR so partial matches still rank, BM25 putting entries with more matches first.
 */
export function matchExpression(text: string): string | undefined {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const unique = [...new Set(words)].slice(0, 32);
  return unique.length ? unique.map((w) => `"${w}"`).join(" OR ") : undefined;
}

/** The words of a `matchExpression` (PostgreSQL parses them itself: `to_tsvector` of the words). */
function matchWords(match: string): string {
  return [...match.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(" ");
}

export class MemoryStore {
  constructor(private readonly db: Db) {}

  async insert(owner: string, entry: MemoryRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO memory_entries (id, owner_id, holder_id, holder_type, type, content, tags, metadata, importance, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        entry.id,
        owner,
        entry.holder_id,
        entry.holder_type,
        entry.type,
        entry.content,
        JSON.stringify(entry.tags),
        JSON.stringify(entry.metadata),
        entry.importance,
        entry.created_at,
        entry.updated_at,
      ],
    );
  }

  async update(owner: string, entry: MemoryRecord): Promise<void> {
    await this.db.run(
      `UPDATE memory_entries SET type = ?, content = ?, tags = ?, metadata = ?, importance = ?, updated_at = ?
       WHERE id = ? AND owner_id = ?`,
      [
        entry.type,
        entry.content,
        JSON.stringify(entry.tags),
        JSON.stringify(entry.metadata),
        entry.importance,
        entry.updated_at,
        entry.id,
        owner,
      ],
    );
  }

  async get(owner: string, id: string): Promise<MemoryRecord | undefined> {
    const row = await this.db.get<MemoryRow>(
      `SELECT ${COLUMNS} FROM memory_entries m WHERE m.id = ? AND m.owner_id = ?`,
      [id, owner],
    );
    if (!row) return undefined;
    const { score: _score, ...record } = recordOf(row);
    return record;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    return (
      (await this.db.run("DELETE FROM memory_entries WHERE id = ? AND owner_id = ?", [id, owner])).changes > 0
    );
  }

  /**
   * The WHERE clause is built from the filters that are set (and each asked tag joins `memory_tags`
   * once), so SQLite plans each combination on its own: `? IS NULL OR ...` clauses defeat its indexes.
   */
  async search(owner: string, filter: MemoryFilter, { count = true } = {}) {
    const params: SqlValue[] = [owner];
    const where = ["m.owner_id = ?"];
    const holders =
      filter.holders ?? (filter.holderId ? [{ id: filter.holderId, type: filter.holderType }] : []);
    if (holders.length) {
      const any = holders.map((h) => {
        params.push(h.id);
        if (!h.type) return "m.holder_id = ?";
        params.push(h.type);
        return "(m.holder_id = ? AND m.holder_type = ?)";
      });
      where.push(`(${any.join(" OR ")})`);
    }
    if (filter.holderType) {
      params.push(filter.holderType);
      where.push("m.holder_type = ?");
    }
    if (filter.type) {
      params.push(filter.type);
      where.push("m.type = ?");
    }
    const tags = filter.tags ?? [];
    if (filter.match && this.db.engine === "postgres")
      return this.searchPostgres(owner, filter, where, params, count);
    // The tag joins come first in the FROM clause, so their parameters precede the WHERE clause's.
    const joins = tags.map(
      (_, i) => `JOIN memory_tags t${i} ON t${i}.memory_id = m.id AND t${i}.owner_id = ? AND t${i}.tag = ?`,
    );
    const joinParams = tags.flatMap((tag) => [owner, tag]);
    let from = ["memory_entries m", ...joins].join(" ");
    let score = "";
    let order = "m.importance DESC, m.created_at DESC, m.id";
    if (filter.match) {
      // memory_fts comes before the joins in FROM, but its conditions are in WHERE: the order stays.
      from = ["memory_fts JOIN memory_entries m ON m.rowid = memory_fts.rowid", ...joins].join(" ");
      where.push("memory_fts MATCH ?", "memory_fts.owner_id = ?");
      params.push(filter.match, owner);
      score = ", bm25(memory_fts, 1.0, 0.5) AS score";
      order = `score, ${order}`;
    }
    const clause = where.join(" AND ");
    const rows = await this.db.all<MemoryRow>(
      `SELECT ${COLUMNS}${score} FROM ${from} WHERE ${clause} ORDER BY ${order} LIMIT ? OFFSET ?`,
      [...joinParams, ...params, filter.limit, filter.offset],
    );
    const total = count
      ? ((
          await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${from} WHERE ${clause}`, [
            ...joinParams,
            ...params,
          ])
        )?.n ?? 0)
      : rows.length;
    return { items: rows.map(recordOf), total };
  }

  /**
   * Text search on PostgreSQL, one statement: BM25 over `memory_terms` (bm25Postings) for the entries
   * the filters keep (tags as EXISTS conditions), best first, then the same tie order as SQLite, with the
   * number of matches beside each row. The score is negated to FTS5's lower-is-better sign, which
   * `recordOf` turns back. Only a page past the last match needs a second statement for the total.
   */
  private async searchPostgres(
    owner: string,
    filter: MemoryFilter,
    where: string[],
    params: SqlValue[],
    count: boolean,
  ) {
    const conditions = [...where];
    const values = [...params];
    for (const tag of filter.tags ?? []) {
      conditions.push(
        "EXISTS (SELECT 1 FROM memory_tags x WHERE x.memory_id = m.id AND x.owner_id = ? AND x.tag = ?)",
      );
      values.push(owner, tag);
    }
    const clause = conditions.join(" AND ");
    const ranked = bm25Postings({
      table: "memory_entries",
      where: clause,
      postings: "memory_terms",
      key: "memory_id",
    });
    const words = matchWords(filter.match ?? "");
    const rows = await this.db.all<MemoryRow & { total: number }>(
      `${ranked}
       SELECT ${COLUMNS}, -s.score AS score, count(*) OVER () AS total
       FROM scored s JOIN memory_entries m ON m.id = s.id
       ORDER BY s.score DESC, m.importance DESC, m.created_at DESC, m.id LIMIT ? OFFSET ?`,
      [...values, words, filter.limit, filter.offset],
    );
    const items = rows.map(({ total: _total, ...row }) => recordOf(row));
    if (!count) return { items, total: items.length };
    if (rows.length > 0 || filter.offset === 0) return { items, total: rows[0]?.total ?? 0 };
    const total = await this.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM memory_entries m
       WHERE ${clause} AND m.tsv @@ (
         SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM unnest(to_tsvector('${TS_CONFIG}', ?)))`,
      [...values, words],
    );
    return { items, total: total?.n ?? 0 };
  }
}
