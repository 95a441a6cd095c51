/**
 * Entity vectors, stored as float32 blobs keyed by a hash of the model and the embedded text, ranked by
 * cosine distance. On SQLite through sqlite-vec's `vec_distance_cosine`: the extension is loaded into
 * the connection on first use (`db.loadExtension`): from source, the npm package's platform build; in
 * the compiled binary, the copy it carries, written to the cache folder first (sqlite-vec-files.ts). On
 * PostgreSQL through pgvector's `<=>`, where the server has the extension (pgvector.ts). Where neither
 * is there (a SQLite built without extension loading, such as the system one on macOS, no build for
 * the platform, a PostgreSQL without pgvector) `available()` says why and search stays on BM25.
 */
import type { Database } from "bun:sqlite";
import type { Db } from "../../storage/db/port.ts";
import type { IndexRow, VectorSupport } from "../types.ts";
import { pgvector, vectorLiteral } from "./pgvector.ts";
import { placeholders } from "./sql.ts";
import { EMBEDDED_SQLITE_VEC } from "./sqlite-vec-embedded.ts";
import { extractSqliteVec } from "./sqlite-vec-files.ts";

const loaded = new WeakMap<Database, { ok: true } | { ok: false; reason: string }>();

/** Loads sqlite-vec into the connection once; the reason it could not, if not. */
export function loadVectorExtension(db: Database): { ok: true } | { ok: false; reason: string } {
  let state = loaded.get(db);
  if (!state) {
    try {
      db.loadExtension(sqliteVecPath());
      state = { ok: true };
    } catch (error) {
      state = { ok: false, reason: `the sqlite-vec extension did not load: ${(error as Error).message}` };
    }
    loaded.set(db, state);
  }
  return state;
}

/** The extension file to load: the binary's embedded copy (checked and cached), else npm's. */
function sqliteVecPath(): string {
  if (EMBEDDED_SQLITE_VEC) return extractSqliteVec(EMBEDDED_SQLITE_VEC);
  if (Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:\\~BUN"))
    throw new Error(`this build carries no sqlite-vec file for ${process.platform}-${process.arch}`);
  const { getLoadablePath } = require("sqlite-vec") as typeof import("sqlite-vec");
  return getLoadablePath();
}

export class SearchVectorStore {
  /** `sqlite` is the port's own bun:sqlite connection when the port is SQLite (sqlite-vec loads into it). */
  constructor(
    readonly db: Db,
    private readonly sqlite?: Database,
  ) {}

  /** Whether vectors can be ranked here, or why not. */
  async available(): Promise<VectorSupport> {
    if (this.db.engine === "postgres") return pgvector(this.db);
    if (!this.sqlite)
      return { ok: false, reason: "the sqlite-vec extension did not load: no SQLite connection" };
    return loadVectorExtension(this.sqlite);
  }

  /** Which of these text hashes already have a vector in the index. */
  async known(index: IndexRow, hashes: string[]): Promise<Set<string>> {
    const have = new Set<string>();
    for (let i = 0; i < hashes.length; i += 500) {
      const slice = hashes.slice(i, i + 500);
      const rows = await this.db.all<{ text_hash: string }>(
        `SELECT text_hash FROM search_vectors WHERE index_id = ? AND owner_id = ? AND text_hash IN (${placeholders(slice.length)})`,
        [index.id, index.owner_id, ...slice],
      );
      for (const r of rows) have.add(r.text_hash);
    }
    return have;
  }

  /**
   * Stores new vectors, records which text each entity was embedded from, and drops vectors no entity of
   * the index uses any more: one transaction.
   */
  async save(
    index: IndexRow,
    model: string,
    rows: { hash: string; vector: Float32Array }[],
    entityHashes: Map<number, string>,
  ): Promise<void> {
    const pg = this.db.engine === "postgres";
    await this.db.tx(async (tx) => {
      for (const r of rows)
        await tx.run(
          `INSERT INTO search_vectors (index_id, owner_id, model, text_hash, dimension, vector${pg ? ", embedding" : ""})
           VALUES (?, ?, ?, ?, ?, ?${pg ? ", CAST(? AS vector)" : ""}) ON CONFLICT (index_id, text_hash) DO NOTHING`,
          [
            index.id,
            index.owner_id,
            model,
            r.hash,
            r.vector.length,
            new Uint8Array(r.vector.buffer.slice(0)),
            ...(pg ? [vectorLiteral(r.vector)] : []),
          ],
        );
      for (const [id, hash] of entityHashes)
        await tx.run("UPDATE search_entities SET embed_hash = ? WHERE id = ? AND owner_id = ?", [
          hash,
          id,
          index.owner_id,
        ]);
      await tx.run(
        `DELETE FROM search_vectors WHERE index_id = ? AND owner_id = ? AND text_hash NOT IN
         (SELECT embed_hash FROM search_entities WHERE index_id = ? AND owner_id = ? AND embed_hash IS NOT NULL)`,
        [index.id, index.owner_id, index.id, index.owner_id],
      );
    });
  }

  /** How many entities of the index have a vector of this model. */
  async count(index: IndexRow, model: string): Promise<number> {
    const row = await this.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM search_entities e JOIN search_vectors v
         ON v.index_id = e.index_id AND v.text_hash = e.embed_hash
       WHERE e.index_id = ? AND e.owner_id = ? AND v.model = ?`,
      [index.id, index.owner_id, model],
    );
    return row?.n ?? 0;
  }

  /** Whether any entity of the index has a vector of this model. */
  async has(index: IndexRow, model: string): Promise<boolean> {
    const row = await this.db.get<{ n: number }>(
      `SELECT 1 AS n FROM search_vectors v JOIN search_entities e ON e.index_id = v.index_id AND e.embed_hash = v.text_hash
       WHERE v.index_id = ? AND v.owner_id = ? AND v.model = ? LIMIT 1`,
      [index.id, index.owner_id, model],
    );
    return row !== undefined;
  }

  /** Entity ids nearest to the query vector (cosine distance), nearest first. */
  nearest(
    index: IndexRow,
    model: string,
    query: Float32Array,
    limit: number,
  ): Promise<{ id: number; distance: number }[]> {
    const pg = this.db.engine === "postgres";
    return this.db.all<{ id: number; distance: number }>(
      `SELECT e.id AS id, ${pg ? "v.embedding <=> CAST(? AS vector)" : "vec_distance_cosine(v.vector, ?)"} AS distance
       FROM search_entities e JOIN search_vectors v ON v.index_id = e.index_id AND v.text_hash = e.embed_hash
       WHERE e.index_id = ? AND e.owner_id = ? AND v.model = ? AND v.dimension = ?
       ORDER BY distance, e.id LIMIT ?`,
      [
        pg ? vectorLiteral(query) : new Uint8Array(query.buffer.slice(0)),
        index.id,
        index.owner_id,
        model,
        query.length,
        limit,
      ],
    );
  }
}
