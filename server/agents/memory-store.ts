/**
 * SQL for memory entries and their search. Full text goes through the FTS5 index `memory_fts` (porter
 * stemming) ranked by BM25; tags are a JSON array on the row and a filter keeps an entry only when every
 * asked tag is on it. Every statement is scoped by `owner_id`.
 */
import type { MemoryType } from "../../schemas/agents.ts";
import type { Store } from "../storage/store.ts";

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
  holders?: { id: string; type: string }[];
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

  search(owner: string, filter: MemoryFilter) {
    const holders =
      filter.holders ?? (filter.holderId ? [{ id: filter.holderId, type: filter.holderType ?? null }] : null);
    const params = {
      owner,
      holders: holders ? JSON.stringify(holders) : null,
      holderType: filter.holderType ?? null,
      type: filter.type ?? null,
      tags: filter.tags?.length ? JSON.stringify(filter.tags) : null,
      match: filter.match ?? null,
    };
    const where = `m.owner_id = $owner
      AND ($holders IS NULL OR EXISTS (
        SELECT 1 FROM json_each($holders) h
        WHERE json_extract(h.value, '$.id') = m.holder_id
          AND (json_extract(h.value, '$.type') IS NULL OR json_extract(h.value, '$.type') = m.holder_type)))
      AND ($holderType IS NULL OR m.holder_type = $holderType)
      AND ($type IS NULL OR m.type = $type)
      AND ($tags IS NULL OR NOT EXISTS (
        SELECT 1 FROM json_each($tags) wanted
        WHERE wanted.value NOT IN (SELECT value FROM json_each(m.tags))))`;
    if (params.match) {
      const from = "memory_fts JOIN memory_entries m ON m.rowid = memory_fts.rowid";
      const fts = `memory_fts MATCH $match AND memory_fts.owner_id = $owner AND ${where}`;
      const rows = this.store.all<MemoryRow>(
        `SELECT ${COLUMNS}, bm25(memory_fts, 1.0, 0.5) AS score FROM ${from} WHERE ${fts}
         ORDER BY score, m.importance DESC, m.id LIMIT $limit OFFSET $offset`,
        { ...params, limit: filter.limit, offset: filter.offset },
      );
      const total = this.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${from} WHERE ${fts}`, params);
      return { items: rows.map(recordOf), total: total?.n ?? 0 };
    }
    const { match: _match, ...plain } = params;
    const rows = this.store.all<MemoryRow>(
      `SELECT ${COLUMNS} FROM memory_entries m WHERE ${where}
       ORDER BY m.importance DESC, m.created_at DESC, m.id LIMIT $limit OFFSET $offset`,
      { ...plain, limit: filter.limit, offset: filter.offset },
    );
    const total = this.store.get<{ n: number }>(
      `SELECT count(*) AS n FROM memory_entries m WHERE ${where}`,
      plain,
    );
    return { items: rows.map(recordOf), total: total?.n ?? 0 };
  }
}
