/**
 * The embedding step of indexing (when the policy names an embeddings endpoint): every entity is
 * embedded from "name: description", keyed by a hash of the model and that text, so a re-index embeds
 * only entities whose text changed and drops vectors nothing uses. Never fatal: when the engine cannot
 * rank vectors (sqlite-vec does not load, PostgreSQL has no pgvector) or the endpoint fails, the run says
 * so and local search stays on BM25.
 */
import { type EmbeddingsClient, EmbeddingsError } from "../../models/embeddings.ts";
import { SearchGraphStore } from "../stores/graph-store.ts";
import type { SearchStore } from "../stores/search-store.ts";
import { SearchVectorStore } from "../stores/vector-store.ts";
import type { IndexRow } from "../types.ts";

export async function embedEntities(
  store: SearchStore,
  index: IndexRow,
  client: EmbeddingsClient,
  signal?: AbortSignal,
): Promise<{ vectors: number; note?: string }> {
  const vectors = new SearchVectorStore(store.db, store.sqlite);
  const ready = await vectors.available();
  if (!ready.ok) return { vectors: 0, note: `${ready.reason}; local search stays on BM25` };
  const entities = await new SearchGraphStore(store.db).allEntities(index);
  const hashOf = (text: string) =>
    new Bun.CryptoHasher("sha256").update(`${client.model}\n${text}`).digest("hex");
  const items = entities.map((e) => {
    const text = `${e.name}: ${e.description}`;
    return { id: e.id, text, hash: hashOf(text) };
  });
  const known = await vectors.known(
    index,
    items.map((i) => i.hash),
  );
  const missing = [...new Map(items.filter((i) => !known.has(i.hash)).map((i) => [i.hash, i])).values()];
  let note: string | undefined;
  let embedded: { hash: string; vector: Float32Array }[] = [];
  try {
    const got = await client.embed(
      missing.map((m) => m.text),
      signal,
    );
    embedded = missing.map((m, i) => ({ hash: m.hash, vector: got[i] as Float32Array }));
  } catch (error) {
    if (!(error instanceof EmbeddingsError)) throw error;
    note = `${error.message}; local search stays on BM25 for entities without a vector`;
  }
  const have = new Set([...known, ...embedded.map((e) => e.hash)]);
  await vectors.save(
    index,
    client.model,
    embedded,
    new Map(items.filter((i) => have.has(i.hash)).map((i) => [i.id, i.hash])),
  );
  return { vectors: items.filter((i) => have.has(i.hash)).length, note };
}
