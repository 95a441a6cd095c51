/**
 * Search speed at scale, offline. A synthetic graph (100k entities, 500k relationships, 20k text units,
 * clustered so communities mean something) is loaded through the real store and community/report
 * pipeline; then, measured in the same run:
 *   - reference: the bare FTS5 BM25 entity match a local search starts with,
 *   - local search context build (match → reports → entities → relationships → sources under the budget) p50/p99,
 *   - the whole offline local answer (context, best sentence, ties, supporting sentences),
 *   - global search offline (BM25 over the level's reports → scored points → answer) p50/p99, and broad
 *     questions answered from the top-level communities,
 *   - index throughput of the whole offline pipeline on the committed staves (tokens/s), with the
 *     tokenizer's start-up apart, and entity typing F1 on the hand-labelled set against a reference.
 * Aims (issue 17): local context p50 < 5 ms and p99 < 20 ms, global p50 < 50 ms and p99 < 100 ms at this
 * size on the 2-core machine; indexing >= 200k tokens/s; entity F1 >= 0.8.
 *
 *   bun bench/search.ts [--entities 100000] [--relationships 500000] [--units 20000] [--queries 300]
 *                       [--db kept.db] [--local-only]
 * `--db` keeps the synthetic database in a file (built when absent, reused when present) and
 * `--local-only` stops after the local context builds: together they profile the query path alone
 * (`bun --cpu-prof bench/search.ts --db /tmp/search.db --local-only`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runIndex, writeGraph } from "../server/search/indexing/pipeline.ts";
import { countTokens, tokenizer } from "../server/search/indexing/units.ts";
import { searchMigrations } from "../server/search/migrations/index.ts";
import { drain } from "../server/search/services/answer.ts";
import { globalSearch } from "../server/search/services/global.ts";
import { localSearch } from "../server/search/services/local.ts";
import { buildLocalContext } from "../server/search/services/local-context.ts";
import { SearchGraphStore } from "../server/search/stores/graph-store.ts";
import { SearchStore } from "../server/search/stores/search-store.ts";
import type { MergedEntity, MergedRelationship } from "../server/search/types.ts";
import { openDatabase } from "../server/storage/database.ts";
import { sqlitePort } from "../server/storage/db/sqlite.ts";
import { migrate } from "../server/storage/migrate.ts";
import { coreMigrations } from "../server/storage/migrations/index.ts";
import { tempDir } from "../tests/helpers/tmp.ts";
import { type EntityScore, scoreEntities } from "../tests/search/entity-labels.ts";
import { fmt, median, percentile } from "./lib/stats.ts";

/** Milliseconds of CPU (user + system) this process used since `since`. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

const { values } = parseArgs({
  options: {
    entities: { type: "string", default: "100000" },
    relationships: { type: "string", default: "500000" },
    units: { type: "string", default: "20000" },
    queries: { type: "string", default: "300" },
    /** Keep the synthetic database in this file: built when absent, reused when present (for profiling). */
    db: { type: "string" },
    /** Only the local context builds (no answers, global search or indexing): for a profile. */
    "local-only": { type: "boolean", default: false },
  },
});
const ENTITIES = Number(values.entities);
const RELATIONSHIPS = Number(values.relationships);
const UNITS = Number(values.units);
const QUERIES = Number(values.queries);
const CLUSTER = 50;
const repo = join(import.meta.dir, "..");

// A deterministic random source and a vocabulary of made-up words, so every run builds the same graph.
let seed = 0x5eed;
const random = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 4294967296;
};
const pick = (n: number) => Math.floor(random() * n);
const SYLLABLES = "ka lo mi ren tas vo quil bra dun eth fa gor hin jul mak nor pel ros sul tiv".split(" ");
const WORDS: string[] = [];
for (const a of SYLLABLES)
  for (const b of SYLLABLES) for (const c of SYLLABLES) if (WORDS.length < 3000) WORDS.push(cap(a + b + c));
function cap(w: string) {
  return w[0]?.toUpperCase() + w.slice(1);
}
/** Unique for i < 9M; each word is a first name ~n/3000 times and a second name as often. */
const nameOf = (i: number) => {
  const first = (i * 7919) % WORDS.length;
  const second = (Math.floor(i / WORDS.length) + first * 13) % WORDS.length;
  return `${WORDS[first]} ${WORDS[second]}`;
};
const TYPES = ["person", "organization", "geo", "event"];

function syntheticGraph(unitIds: number[]) {
  const clusters = Math.ceil(ENTITIES / CLUSTER);
  const unitsPerCluster = Math.max(1, Math.floor(unitIds.length / clusters));
  const entities: MergedEntity[] = [];
  for (let i = 0; i < ENTITIES; i++) {
    const cluster = Math.floor(i / CLUSTER);
    const units = [0, 1, 2].map(
      (k) => unitIds[(cluster * unitsPerCluster + ((i + k) % unitsPerCluster)) % unitIds.length] as number,
    );
    const name = nameOf(i);
    entities.push({
      key: name.toUpperCase(),
      name,
      type: TYPES[i % 4] as string,
      description: `${name} is a ${TYPES[i % 4]} known for the ${WORDS[pick(WORDS.length)]} and the ${WORDS[cluster % WORDS.length]} affair.`,
      mentions: 3,
      unitIds: [...new Set(units)],
      degree: 0,
    });
  }
  const seen = new Set<number>();
  const relationships: MergedRelationship[] = [];
  const degree = new Uint32Array(ENTITIES);
  while (relationships.length < RELATIONSHIPS) {
    const s = pick(ENTITIES);
    const t = random() < 0.9 ? Math.floor(s / CLUSTER) * CLUSTER + pick(CLUSTER) : pick(ENTITIES);
    if (t >= ENTITIES || s === t) continue;
    const [a, b] = s < t ? [s, t] : [t, s];
    if (seen.has(a * ENTITIES + b)) continue;
    seen.add(a * ENTITIES + b);
    degree[a] = (degree[a] ?? 0) + 1;
    degree[b] = (degree[b] ?? 0) + 1;
    const ea = entities[a] as MergedEntity;
    const eb = entities[b] as MergedEntity;
    relationships.push({
      source: ea.key,
      target: eb.key,
      description: `${ea.name} and ${eb.name} met over the ${WORDS[pick(WORDS.length)]}.`,
      weight: 1 + pick(10),
      unitIds: ea.unitIds.slice(0, 1),
      rank: 0,
    });
  }
  const degreeOf = new Map<string, number>();
  for (const [i, e] of entities.entries()) {
    e.degree = degree[i] ?? 0;
    degreeOf.set(e.key, e.degree);
  }
  for (const r of relationships) r.rank = (degreeOf.get(r.source) ?? 0) + (degreeOf.get(r.target) ?? 0);
  return { entities, relationships };
}

function syntheticUnit(u: number): { text: string; tokens: number } {
  const cluster = Math.floor(u / Math.max(1, Math.floor(UNITS / Math.ceil(ENTITIES / CLUSTER))));
  const sentences: string[] = [];
  for (let k = 0; k < 12; k++) {
    const a = nameOf(cluster * CLUSTER + pick(CLUSTER));
    const b = nameOf(cluster * CLUSTER + pick(CLUSTER));
    sentences.push(
      `${a} spoke with ${b} about the ${WORDS[pick(WORDS.length)]} near the ${WORDS[pick(WORDS.length)]} hall.`,
    );
  }
  const text = sentences.join(" ");
  return { text, tokens: Math.ceil(text.split(" ").length * 1.4) };
}

function freshDb(path: string) {
  const db = openDatabase(path);
  migrate(db, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
  return { db, store: new SearchStore(sqlitePort(db), db) };
}

const dir = tempDir("atrium-bench-search-");
const quality: { typed?: EntityScore; reference?: EntityScore } = {};
try {
  // ---- load the synthetic graph through the real store and pipeline ----
  const kept = values.db !== undefined && existsSync(values.db);
  const { db, store } = freshDb(values.db ?? join(dir.path, "app.db"));
  const graph = new SearchGraphStore(store.db);
  let index = await store.ensureIndex("local", "bench");
  let started = performance.now();
  const unitIds: number[] = [];
  const perDocument = 1000;
  for (let d = 0; d * perDocument < UNITS; d++) {
    const units = Array.from({ length: Math.min(perDocument, UNITS - d * perDocument) }, (_, k) =>
      syntheticUnit(d * perDocument + k),
    );
    // A kept database: the units are made all the same, so the random source reaches the queries as it
    // does in a fresh run (the same questions).
    if (kept) {
      unitIds.push(...units.map((_, k) => d * perDocument + k + 1));
      continue;
    }
    await store.tx(async (tx) => {
      for (const row of await tx.insertDocument(
        index,
        { title: `doc-${d}.txt`, hash: String(d), chars: 0 },
        units,
      ))
        unitIds.push(row.id);
    });
  }
  const merged = syntheticGraph(unitIds);
  const warnings: string[] = [];
  if (!kept) await writeGraph(store, graph, index, merged, "synthetic", {}, () => {}, warnings);
  index = (await store.findIndex("local", "bench")) ?? index;
  const loadSeconds = (performance.now() - started) / 1000;
  const counts = await graph.counts(index);
  const stats = JSON.parse((await store.findIndex("local", "bench"))?.stats ?? "{}") as {
    levels: number;
    modularity: number[];
  };
  console.log(
    `synthetic graph: ${fmt(counts.entities)} entities, ${fmt(counts.relationships)} relationships, ${fmt(unitIds.length)} units, ` +
      `${fmt(counts.communities)} communities in ${stats.levels} levels (modularity level 0: ${fmt(stats.modularity[0] ?? 0, 3)}), loaded in ${fmt(loadSeconds, 1)} s`,
  );

  // ---- queries: names of random entities, and themes made of vocabulary words ----
  const localQueries = Array.from(
    { length: QUERIES },
    () => `Who is ${nameOf(pick(ENTITIES))} and what did they do?`,
  );
  const globalQueries = Array.from(
    { length: Math.max(10, Math.floor(QUERIES / 6)) },
    () => `What happened around the ${WORDS[pick(WORDS.length)]} affair?`,
  );
  const stores = { search: store, graph };
  const time = async (fn: () => unknown) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  // Warm up statement caches and the tokenizer.
  for (const q of localQueries.slice(0, 20)) await buildLocalContext(stores, index, q);
  const reference: number[] = [];
  const local: number[] = [];
  // CPU time of the same builds (every thread of the process, concurrent GC included): what the code costs,
  // apart from waiting for a core on a busy machine.
  const localCpu: number[] = [];
  let empty = 0;
  const inContext = { reports: 0, entities: 0, relationships: 0, sources: 0 };
  // Each question's first build, apart: what it reads is then remembered per index version (searches,
  // term counts, name types) and per pool (case counts, mentions); the timed build below is the second.
  const firstBuild: number[] = [];
  const firstCpu: number[] = [];
  for (const q of localQueries) {
    const firstCpu0 = process.cpuUsage();
    const firstT0 = performance.now();
    const tables = (await buildLocalContext(stores, index, q)).tables;
    firstBuild.push(performance.now() - firstT0);
    firstCpu.push(cpuMs(firstCpu0));
    for (const key of Object.keys(inContext) as (keyof typeof inContext)[])
      inContext[key] += tables[key].filter((row) => row.in_context).length;
    reference.push(
      await time(() =>
        graph.matchEntities(
          index,
          `"${q.split(" ")[2]?.toLowerCase()}" OR "${q.split(" ")[3]?.toLowerCase()}"`,
          10,
        ),
      ),
    );
    const cpu0 = process.cpuUsage();
    local.push(
      await time(async () => {
        if ((await buildLocalContext(stores, index, q)).entities.length === 0) empty++;
      }),
    );
    localCpu.push(cpuMs(cpu0));
  }
  const firstLine = `  a question's first build             p50 ${fmt(median(firstBuild), 2)} ms  p99 ${fmt(percentile(firstBuild, 99), 2)} ms; CPU p50 ${fmt(median(firstCpu), 2)} ms  p99 ${fmt(percentile(firstCpu, 99), 2)} ms`;
  if (values["local-only"]) {
    console.log(
      `\nlocal context build, ${local.length} queries: p50 ${fmt(median(local), 2)} ms  p99 ${fmt(percentile(local, 99), 2)} ms; ` +
        `CPU p50 ${fmt(median(localCpu), 2)} ms  p99 ${fmt(percentile(localCpu, 99), 2)} ms; ` +
        `FTS5 match p50 ${fmt(median(reference), 2)} ms  p99 ${fmt(percentile(reference, 99), 2)} ms`,
    );
    console.log(firstLine);
    db.close();
    dir.remove();
    process.exit(0);
  }
  // The whole offline local answer: context, then the best sentence, ties and supporting sentences.
  const localAnswer: number[] = [];
  for (const q of localQueries.slice(0, 100)) {
    const t0 = performance.now();
    await drain(await localSearch(stores, index, q));
    localAnswer.push(performance.now() - t0);
  }
  const global: number[] = [];
  let unanswered = 0;
  for (const q of globalQueries) {
    const t0 = performance.now();
    const answer = await globalSearch({ search: store, graph }, index, q, undefined, { level: 0 });
    const text = await drain(answer);
    global.push(performance.now() - t0);
    if (text.startsWith("I am sorry")) unanswered++;
  }
  // Broad questions read the top-level communities and the leading entities of each type.
  const broad: number[] = [];
  for (const q of ["What are the main themes?", "Who are the main characters?", "What is this about?"])
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await drain(await globalSearch({ search: store, graph }, index, q, undefined, { level: 0 }));
      broad.push(performance.now() - t0);
    }
  db.close();

  // ---- index throughput on the committed corpus slice, start-up (tokenizer tables) apart ----
  const fixtures = join(repo, "tests", "search", "fixtures");
  const documents = ["stave-one.txt", "stave-three.txt"].map((title) => ({
    title,
    text: readFileSync(join(fixtures, title), "utf8"),
  }));
  started = performance.now();
  tokenizer();
  const startupMs = performance.now() - started;
  const tokens = documents.reduce((sum, d) => sum + countTokens(d.text), 0);
  const rates: number[] = [];
  const cpuRates: number[] = [];
  let summary: Awaited<ReturnType<typeof runIndex>> | undefined;
  for (let run = 0; run < 5; run++) {
    const fresh = freshDb(join(dir.path, `corpus-${run}.db`));
    started = performance.now();
    const cpu0 = process.cpuUsage();
    summary = await runIndex(fresh.store, "local", "carol", documents);
    rates.push(tokens / ((performance.now() - started) / 1000));
    cpuRates.push(tokens / (cpuMs(cpu0) / 1000));
    // Entity quality on the hand-labelled set, against a reference typing every name a person (the
    // previous extractor's default) measured on the same entities.
    if (run === 0) {
      const carol = await fresh.store.findIndex("local", "carol");
      if (!carol) throw new Error("no index");
      const entities = await new SearchGraphStore(fresh.store.db).allEntities(carol);
      quality.typed = scoreEntities(entities);
      quality.reference = scoreEntities(entities.map((e) => ({ name: e.name, type: "person" })));
    }
    fresh.db.close();
  }

  const refP50 = median(reference);
  const localP50 = median(local);
  const globalP50 = median(global);
  const per = (n: number) => fmt(n / local.length, 1);
  console.log(
    `\nlocal search, ${fmt(local.length)} queries (${empty} matched no entity); rows in context per query: ` +
      `${per(inContext.reports)} reports, ${per(inContext.entities)} entities, ${per(inContext.relationships)} relationships, ${per(inContext.sources)} sources`,
  );
  console.log(
    `  reference: FTS5 entity match alone   p50 ${fmt(refP50, 2)} ms  p99 ${fmt(percentile(reference, 99), 2)} ms`,
  );
  console.log(
    `  context build (12k-token budget)     p50 ${fmt(localP50, 2)} ms  p99 ${fmt(percentile(local, 99), 2)} ms  = ${fmt(localP50 / refP50, 1)}x the match; aim p50 < 5 ms, p99 < 20 ms: ${fmt(localP50 / 5, 2)} and ${fmt(percentile(local, 99) / 20, 2)} of the aims`,
  );
  console.log(
    `  the same, CPU time                   p50 ${fmt(median(localCpu), 2)} ms  p99 ${fmt(percentile(localCpu, 99), 2)} ms  (the process's CPU, its GC threads included, so it can pass wall time)`,
  );
  console.log(firstLine);
  console.log(
    `  whole offline answer (100 queries)   p50 ${fmt(median(localAnswer), 2)} ms  p99 ${fmt(percentile(localAnswer, 99), 2)} ms  = ${fmt(median(localAnswer) / refP50, 1)}x the match`,
  );
  console.log(`global search offline, ${global.length} queries (${unanswered} unanswered), level 0`);
  console.log(
    `  map-reduce answer                    p50 ${fmt(globalP50, 2)} ms  p99 ${fmt(percentile(global, 99), 2)} ms = ${fmt(globalP50 / refP50, 1)}x the match; aim p50 < 50 ms, p99 < 100 ms: ${fmt(globalP50 / 50, 2)} and ${fmt(percentile(global, 99) / 100, 2)} of the aims`,
  );
  console.log(
    `  broad questions (top communities)    p50 ${fmt(median(broad), 2)} ms  p99 ${fmt(percentile(broad, 99), 2)} ms`,
  );
  const rate = median(rates);
  console.log(
    `index throughput, offline, the committed staves (${fmt(tokens)} tokens): start-up ${fmt(startupMs, 0)} ms (tokenizer tables, once per process), ` +
      `then ${fmt(rate / 1000, 1)}k tokens/s median of 5 runs (best ${fmt(Math.max(...rates) / 1000, 1)}k); aim >= 200k tokens/s: ${fmt(rate / 200_000, 2)} of the aim ` +
      `(${summary?.entities} entities, ${summary?.relationships} relationships, ${summary?.communities} communities); ` +
      `by CPU time ${fmt(median(cpuRates) / 1000, 1)}k tokens/s`,
  );
  const q = (s: EntityScore | undefined) =>
    s ? `P ${fmt(s.precision, 2)} R ${fmt(s.recall, 2)} F1 ${fmt(s.f1, 2)}` : "n/a";
  console.log(
    `entity typing on the hand-labelled set (person/place/organisation): ${q(quality.typed)}; reference (every name a person): ${q(quality.reference)}; ` +
      `ratio ${fmt((quality.typed?.f1 ?? 0) / Math.max(0.01, quality.reference?.f1 ?? 0), 2)}x; aim F1 >= 0.8`,
  );
} finally {
  dir.remove();
}
