/**
 * A synthetic search graph for the UI bench: `entities` made-up names in clusters of 50, `relationships`
 * mostly inside a cluster, one text unit per cluster, written through the real pipeline's writeGraph
 * (communities and extractive reports included) into a data dir's app.db as the local user's index
 * "big", beside a one-document index "a-small" (listed first, so the view opens on it).
 */
import { writeGraph } from "../../server/search/indexing/pipeline.ts";
import { searchMigrations } from "../../server/search/migrations/index.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import type { MergedEntity, MergedRelationship } from "../../server/search/types.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";

const CLUSTER = 50;
const TYPES = ["person", "organization", "geo", "event"];

export async function seedGraph(path: string, size: { entities: number; relationships: number }) {
  const db = openDatabase(path);
  migrate(db, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
  const store = new SearchStore(sqlitePort(db), db);
  const graph = new SearchGraphStore(store.db);
  let seed = 0x5eed;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const pick = (n: number) => Math.floor(random() * n);

  const small = await store.ensureIndex("local", "a-small");
  const smallUnits = await store.insertDocument(small, { title: "a.txt", hash: "a", chars: 10 }, [
    { text: "Ada Lovelace met Charles Babbage.", tokens: 8 },
  ]);
  const pair = (name: string): MergedEntity => ({
    key: name.toUpperCase(),
    name,
    type: "person",
    description: `${name}.`,
    mentions: 1,
    unitIds: [smallUnits[0]?.id as number],
    degree: 1,
  });
  await writeGraph(
    store,
    graph,
    small,
    {
      entities: [pair("Ada Lovelace"), pair("Charles Babbage")],
      relationships: [
        {
          source: "ADA LOVELACE",
          target: "CHARLES BABBAGE",
          description: "met",
          weight: 1,
          unitIds: [],
          rank: 2,
        },
      ],
    },
    "synthetic",
    {},
    () => {},
    [],
  );

  const index = await store.ensureIndex("local", "big");
  const clusters = Math.ceil(size.entities / CLUSTER);
  const units = await store.insertDocument(
    index,
    { title: "big.txt", hash: "big", chars: 0 },
    Array.from({ length: clusters }, (_, c) => ({ text: `Cluster ${c} of the synthetic graph.`, tokens: 8 })),
  );
  const entities: MergedEntity[] = Array.from({ length: size.entities }, (_, i) => {
    const name = `Entity ${i}`;
    return {
      key: name.toUpperCase(),
      name,
      type: TYPES[i % 4] as string,
      description: `${name} belongs to cluster ${Math.floor(i / CLUSTER)}.`,
      mentions: 2,
      unitIds: [units[Math.floor(i / CLUSTER)]?.id as number],
      degree: 0,
    };
  });
  const seen = new Set<number>();
  const relationships: MergedRelationship[] = [];
  while (relationships.length < size.relationships) {
    const s = pick(size.entities);
    const t = random() < 0.9 ? Math.floor(s / CLUSTER) * CLUSTER + pick(CLUSTER) : pick(size.entities);
    if (t >= size.entities || s === t) continue;
    const [a, b] = s < t ? [s, t] : [t, s];
    if (seen.has(a * size.entities + b)) continue;
    seen.add(a * size.entities + b);
    const ea = entities[a] as MergedEntity;
    const eb = entities[b] as MergedEntity;
    ea.degree++;
    eb.degree++;
    relationships.push({
      source: ea.key,
      target: eb.key,
      description: `${ea.name} and ${eb.name} met.`,
      weight: 1 + pick(10),
      unitIds: ea.unitIds,
      rank: 0,
    });
  }
  await writeGraph(store, graph, index, { entities, relationships }, "synthetic", {}, () => {}, []);
  db.close();
}
