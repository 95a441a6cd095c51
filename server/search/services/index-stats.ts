/**
 * What a query reads about a whole index, remembered per index version: how many units it has, in how
 * many units each question term occurs (counted up to a cap), how many units each document has, the
 * results of its full-text searches, and the types of the names it has met. These were a fifth to a
 * third of a local question's time at 20k units (a count over the unit index, an FTS5 count per term, a
 * count per document), the searches another third, and they change only when the index's units or graph do.
 *
 * The version is the index row's `created_at` and `updated_at`, read by the caller for this query:
 * every change of an index's units or of its entities and relationships moves `updated_at` in the
 * change's own transaction, strictly forward (SearchStore.touch, SearchGraphStore.replaceGraph), so
 * another instance's change is seen at its next read of the row, and an entry of
 * an older version is dropped when a newer one is asked for. Kept per database (a test process opens
 * many), a few indexes each. Never call these with a store bound to an open transaction: its reads may
 * see writes that are not the version it names.
 */
import type { Db } from "../../storage/db/port.ts";
import type { SearchGraphStore } from "../stores/graph-store.ts";
import type { SearchStore } from "../stores/search-store.ts";
import type { IndexRow } from "../types.ts";

interface Known {
  version: string;
  units?: number;
  /** Units holding a term, by cap and term. */
  terms: Map<string, number>;
  /** Units of a document, by document id. */
  sizes: Map<number, number>;
  /** Full-text searches (units, phrases, entities), by what and how many was asked. */
  searches: Map<string, readonly unknown[]>;
  /** The type the index gave a name ("" for a name that is no entity of the index). */
  types: Map<string, string>;
}

/** Index versions remembered per database, the least recently asked dropped first. */
const MAX_INDEXES = 32;
/** Terms and document sizes remembered per index version (a map past this starts again). */
const MAX_ENTRIES = 20_000;

const KNOWN = new WeakMap<Db, Map<number, Known>>();

function known(store: { db: Db }, index: IndexRow): Known {
  let byIndex = KNOWN.get(store.db);
  if (!byIndex) {
    byIndex = new Map();
    KNOWN.set(store.db, byIndex);
  }
  const version = `${index.created_at}\u0000${index.updated_at}`;
  let entry = byIndex.get(index.id);
  byIndex.delete(index.id);
  if (entry?.version !== version)
    entry = { version, terms: new Map(), sizes: new Map(), searches: new Map(), types: new Map() };
  byIndex.set(index.id, entry);
  for (const id of byIndex.keys()) {
    if (byIndex.size <= MAX_INDEXES) break;
    byIndex.delete(id);
  }
  return entry;
}

/** The index's units. */
export async function unitCount(store: SearchStore, index: IndexRow): Promise<number> {
  const entry = known(store, index);
  if (entry.units === undefined) entry.units = await store.countUnits(index);
  return entry.units;
}

/** In how many of the index's units each term occurs, up to `cap` (SearchStore.unitTermCounts). */
export async function termCounts(
  store: SearchStore,
  index: IndexRow,
  terms: string[],
  cap: number,
): Promise<number[]> {
  const entry = known(store, index);
  const key = (term: string) => `${cap}\u0000${term}`;
  const found = await readThrough(entry.terms, terms.map(key), async (keys) => {
    const missing = keys.map((k) => k.slice(k.indexOf("\u0000") + 1));
    const counts = await store.unitTermCounts(index, missing, cap);
    return new Map(keys.map((k, i) => [k, counts[i] ?? 0]));
  });
  return terms.map((term) => found.get(key(term)) ?? 0);
}

/** The units of each of these documents of the index (SearchStore.documentUnitCounts). */
export function documentSizes(
  store: SearchStore,
  index: IndexRow,
  documentIds: number[],
): Promise<Map<number, number>> {
  // A document not found (gone since the row was read) is not kept: it is asked again next time.
  return readThrough(known(store, index).sizes, documentIds, (missing) =>
    store.documentUnitCounts(index, missing),
  );
}

/**
 * The values of `keys` in `cache`, the missing ones read in one call and kept (a cache past MAX_ENTRIES
 * starts again); a key `read` does not answer is left out and not kept.
 */
async function readThrough<K, V>(
  cache: Map<K, V>,
  keys: K[],
  read: (missing: K[]) => Promise<Map<K, V>>,
): Promise<Map<K, V>> {
  const found = new Map<K, V>();
  const missing: K[] = [];
  for (const k of keys) {
    const v = cache.get(k);
    if (v !== undefined) found.set(k, v);
    else if (!missing.includes(k)) missing.push(k);
  }
  if (missing.length === 0) return found;
  const fresh = await read(missing);
  if (cache.size + missing.length > MAX_ENTRIES) cache.clear();
  for (const k of missing) {
    const v = fresh.get(k);
    if (v === undefined) continue;
    found.set(k, v);
    cache.set(k, v);
  }
  return found;
}

/**
 * A full-text search of the index (`kind` names which), remembered for the index version: the BM25
 * searches over units and entities were a third of a local question at 20k units, and a question's words
 * come back (the context, then the answer; a question asked again). The rows are shared: read them only.
 */
export async function rememberedSearch<T>(
  store: { db: Db },
  index: IndexRow,
  kind: string,
  match: string,
  limit: number,
  read: () => Promise<T[]>,
): Promise<readonly T[]> {
  const entry = known(store, index);
  const key = `${kind}\u0000${limit}\u0000${match}`;
  const found = entry.searches.get(key);
  if (found) return found as readonly T[];
  const rows = await read();
  if (entry.searches.size >= MAX_SEARCHES) entry.searches.clear();
  entry.searches.set(key, rows);
  return rows;
}

/** Searches remembered per index version (a map past this starts again). */
const MAX_SEARCHES = 2_000;

/** The types the index gave these names (SearchGraphStore.entityTypes), each name read once per version. */
export async function entityTypes(
  graph: SearchGraphStore,
  index: IndexRow,
  names: string[],
): Promise<Map<string, string>> {
  // A name that is no entity of the index is kept as "" so that it is not asked again.
  const typed = await readThrough(known(graph, index).types, names, async (missing) => {
    const read = await graph.entityTypes(index, missing);
    return new Map(missing.map((name) => [name, read.get(name) ?? ""]));
  });
  for (const [name, type] of typed) if (type === "") typed.delete(name);
  return typed;
}
