/**
 * pgvector on PostgreSQL: whether the server has the extension, found once per database at start
 * (`pg_available_extensions`, then `CREATE EXTENSION IF NOT EXISTS vector`). With it, `search_vectors`
 * gains an `embedding vector` column beside its float32 bytes (added here, not by a migration, since a
 * migration cannot depend on an extension the server may lack) and nearest entities are ranked by
 * `<=>` (cosine distance). Without it the reason is reported (`GET /search/indexes`, the index run's
 * warnings) and local search stays on BM25, as on a SQLite without sqlite-vec.
 */
import type { Db } from "../../storage/db/port.ts";
import type { VectorSupport } from "../types.ts";

const found = new WeakMap<Db, Promise<VectorSupport>>();

/** Whether pgvector ranks vectors on this database, or why not (detected once, then remembered). */
export function pgvector(db: Db): Promise<VectorSupport> {
  let state = found.get(db);
  if (!state) {
    state = detect(db);
    found.set(db, state);
  }
  return state;
}

async function detect(db: Db): Promise<VectorSupport> {
  try {
    const offered = await db.get("SELECT 1 AS n FROM pg_available_extensions WHERE name = 'vector'");
    if (!offered) return { ok: false, reason: "this PostgreSQL server has no pgvector extension" };
    await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
    await db.exec("ALTER TABLE search_vectors ADD COLUMN IF NOT EXISTS embedding vector");
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `the pgvector extension could not be enabled: ${(error as Error).message}` };
  }
}

/** A vector as pgvector's text form, `[0.1,0.2,…]`. */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(",")}]`;
}
