/**
 * SQL for memory entries and their search. Full text goes through the FTS5 index `memory_fts` (porter
 * stemming) ranked by BM25; tags are a JSON array on the row, mirrored into `memory_tags` by triggers,
 * and the filter keeps an entry only when every asked tag is on it. Every statement is scoped by `owner_id`.
 */
import type { SQLQueryBindings } from "bun:sqlite";
import type { MemoryType } from "../../../schemas/agents.ts";
import type { Store } from "../../storage/store.ts";

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

export class MemoryStore {
  constructor(private readonly store: Store) {}

  insert(owner: string, entry: MemoryRecord): void {
    this.store.run(
      `INSERT INTO memory_entries (id, owner_id, holder_id, holder_type, type, content, tags, metadata, importance, created_at, updated_at)
       VALUES ($id, $owner, $holder_id, $holder_type, $type, $content, $tags, $metadata, $importance, $created_at, $updated_at)`,
      { ...entry, owner, tags: JSON.stringify(entry.tags), metadata: JSON.stringify(entry.metadata) },
    );
  }

  update(owner: string, entry: MemoryRecord): void {
    this.store.run(
      `UPDATE memory_entries SET type = $type, content = $content, tags = $tags, metadata = $metadata,
         importance = $importance, updated_at = $updated_at
       WHERE id = $id AND owner_id = $owner`,
      {
        id: entry.id,
        type: entry.type,
        content: entry.content,
        tags: JSON.stringify(entry.tags),
        metadata: JSON.stringify(entry.metadata),
        importance: entry.importance,
        updated_at: entry.updated_at,
        owner,
      },
    );
  }

  get(owner: string, id: string): MemoryRecord | undefined {
    const row = this.store.get<MemoryRow>(
      `SELECT ${COLUMNS} FROM memory_entries m WHERE m.id = $id AND m.owner_id = $owner`,
      {
        id,
        owner,
      },
    );
    if (!row) return undefined;
    const { score: _score, ...record } = recordOf(row);
    return record;
  }

  delete(owner: string, id: string): boolean {
    return (
      this.store.run("DELETE FROM memory_entries WHERE id = $id AND owner_id = $owner", { id, owner })
        .changes > 0
    );
  }

  /**
   * The WHERE clause is built from the filters that are set (and each asked tag joins `memory_tags`
   * once), so SQLite plans each combination on its own: `$x IS NULL OR ...` clauses defeat its indexes.
   */
  search(owner: string, filter: MemoryFilter, { count = true } = {}) {
    const params: Record<string, SQLQueryBindings> = { owner };
    const where = ["m.owner_id = $owner"];
    const joins: string[] = [];
    const holders =
      filter.holders ?? (filter.holderId ? [{ id: filter.holderId, type: filter.holderType }] : []);
    if (holders.length) {
      const any = holders.map((h, i) => {
        params[`holder${i}`] = h.id;
        if (!h.type) return `m.holder_id = $holder${i}`;
        params[`holderType${i}`] = h.type;
        return `(m.holder_id = $holder${i} AND m.holder_type = $holderType${i})`;
      });
      where.push(`(${any.join(" OR ")})`);
    }
    if (filter.holderType) {
      params.holderType = filter.holderType;
      where.push("m.holder_type = $holderType");
    }
    if (filter.type) {
      params.type = filter.type;
      where.push("m.type = $type");
    }
    (filter.tags ?? []).forEach((tag, i) => {
      params[`tag${i}`] = tag;
      joins.push(
        `JOIN memory_tags t${i} ON t${i}.memory_id = m.id AND t${i}.owner_id = $owner AND t${i}.tag = $tag${i}`,
      );
    });
    let from = ["memory_entries m", ...joins].join(" ");
    let score = "";
    let order = "m.importance DESC, m.created_at DESC, m.id";
    if (filter.match) {
      params.match = filter.match;
      from = ["memory_fts JOIN memory_entries m ON m.rowid = memory_fts.rowid", ...joins].join(" ");
      where.push("memory_fts MATCH $match", "memory_fts.owner_id = $owner");
      score = ", bm25(memory_fts, 1.0, 0.5) AS score";
      order = `score, ${order}`;
    }
    const clause = where.join(" AND ");
    const rows = this.store.all<MemoryRow>(
      `SELECT ${COLUMNS}${score} FROM ${from} WHERE ${clause} ORDER BY ${order} LIMIT $limit OFFSET $offset`,
      { ...params, limit: filter.limit, offset: filter.offset },
    );
    const total = count
      ? (this.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${from} WHERE ${clause}`, params)?.n ?? 0)
      : rows.length;
    return { items: rows.map(recordOf), total };
  }
}
