/**
 * Documents that change without a rebuild (issue 31, item 4), offline, on real SQLite: the five committed
 * books cut into 200 documents at paragraph ends are indexed from scratch (the reference, measured in the
 * same run), then one document is changed and sent again, then one is removed. Prints each time and its
 * ratio to the full build, and how many community reports the change kept. Aim: updating one document of
 * 200 ÷ a full rebuild ≤ 0.1.
 *
 *   bun bench/search-documents.ts [--documents 200] [--rounds 3]
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type IndexOptions, runIndex } from "../server/search/indexing/pipeline.ts";
import { searchMigrations } from "../server/search/migrations/index.ts";
import { SearchStore } from "../server/search/stores/search-store.ts";
import { openDatabase } from "../server/storage/database.ts";
import { sqlitePort } from "../server/storage/db/sqlite.ts";
import { migrate } from "../server/storage/migrate.ts";
import { coreMigrations } from "../server/storage/migrations/index.ts";
import { tempDir } from "../tests/helpers/tmp.ts";
import { BOOKS, bookPath } from "./lib/qa-set.ts";
import { fmt } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { documents: { type: "string", default: "200" }, rounds: { type: "string", default: "3" } },
});
const count = Number(values.documents);
const rounds = Number(values.rounds);

/** The books' paragraphs dealt into `n` documents of about equal size, in reading order. */
function documents(n: number): { title: string; text: string }[] {
  const paragraphs = BOOKS.flatMap((book) => readFileSync(bookPath(book), "utf8").split(/\r?\n\s*\r?\n/));
  const total = paragraphs.reduce((sum, p) => sum + p.length, 0);
  const out: { title: string; text: string }[] = [];
  let current: string[] = [];
  let done = 0;
  for (const p of paragraphs) {
    current.push(p);
    done += p.length;
    // Cut where the running total passes the next n-th of the whole, so there are n documents.
    if (done >= ((out.length + 1) * total) / n && out.length < n - 1) {
      out.push({ title: `part-${String(out.length).padStart(3, "0")}.txt`, text: current.join("\n\n") });
      current = [];
    }
  }
  out.push({ title: `part-${String(out.length).padStart(3, "0")}.txt`, text: current.join("\n\n") });
  return out;
}

/**
 * Where a run's time goes, from the pipeline's progress calls: reading and splitting documents, extracting,
 * storing them and writing the merged graph (until communities start), community detection, reports, and
 * writing the communities and the summary (after the last report).
 */
const STAGES = ["documents", "extraction", "merge+entities", "communities", "reports", "write"] as const;
type Stage = (typeof STAGES)[number];
const spent = new Map<string, Map<Stage, number[]>>();

/** Runs `run` with progress timing; returns seconds, and files each stage's seconds under `label`. */
const seconds = async (label: string, run: (onProgress: IndexOptions["onProgress"]) => Promise<unknown>) => {
  const started = performance.now();
  const marks: { stage: Stage; at: number }[] = [{ stage: "documents", at: started }];
  const mark = (stage: Stage) => {
    if (marks.at(-1)?.stage !== stage) marks.push({ stage, at: performance.now() });
  };
  await run((phase, done, total) => {
    if (phase === "extraction") mark(done < total ? "extraction" : "merge+entities");
    else if (phase === "communities") mark(done === 0 ? "communities" : "reports");
    else if (phase === "reports" && done === total) mark("write");
  });
  const ended = performance.now();
  const stages = spent.get(label) ?? new Map<Stage, number[]>();
  spent.set(label, stages);
  const took = new Map<Stage, number>();
  marks.forEach((m, i) => {
    took.set(m.stage, (took.get(m.stage) ?? 0) + ((marks[i + 1]?.at ?? ended) - m.at) / 1000);
  });
  for (const stage of STAGES) stages.set(stage, [...(stages.get(stage) ?? []), took.get(stage) ?? 0]);
  return (ended - started) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const load = loadavg().map((l) => fmt(l, 1));
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${load.join(" ")}`,
);
const docs = documents(count);
const dir = tempDir("atrium-bench-docs-");
try {
  const full: number[] = [];
  const update: number[] = [];
  const remove: number[] = [];
  let kept = "";
  for (let round = 0; round < rounds; round++) {
    const db = openDatabase(join(dir.path, `docs-${round}.db`));
    migrate(db, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
    const store = new SearchStore(sqlitePort(db), db);
    full.push(
      await seconds("full build", (onProgress) => runIndex(store, "bench", "docs", docs, { onProgress })),
    );
    const index = await store.findIndex("bench", "docs");
    if (!index) throw new Error("no index");
    const reportIds = () =>
      new Set(
        db
          .query<{ c: string }, []>("SELECT content AS c FROM search_reports")
          .all()
          .map((r) => r.c),
      );
    const before = reportIds();
    // One document of the middle changes: a sentence added, as an edit would.
    const target = docs[Math.floor(docs.length / 2)] as { title: string; text: string };
    const changed = { ...target, text: `${target.text}\n\nThe editor added this sentence about the text.` };
    update.push(
      await seconds("update", (onProgress) => runIndex(store, "bench", "docs", [changed], { onProgress })),
    );
    const after = reportIds();
    kept = `${[...after].filter((c) => before.has(c)).length} of ${after.size}`;
    remove.push(
      await seconds("remove", (onProgress) =>
        runIndex(store, "bench", "docs", [], { remove: [docs[1]?.title as string], onProgress }),
      ),
    );
    db.close();
  }
  const f = median(full);
  const u = median(update);
  const r = median(remove);
  console.log(`${docs.length} documents, ${rounds} rounds, median seconds:`);
  console.log(`  full build            ${fmt(f, 2)} s (reference)`);
  console.log(
    `  update one document   ${fmt(u, 2)} s  ratio ${fmt(u / f, 3)} (aim <= 0.1: ${u / f <= 0.1 ? "met" : "not met"})`,
  );
  console.log(`  remove one document   ${fmt(r, 2)} s  ratio ${fmt(r / f, 3)}`);
  console.log(`  reports kept by the update (last round): ${kept}`);
  console.log("median seconds by stage:");
  console.log(`  ${"".padEnd(12)}${STAGES.map((s) => s.padStart(15)).join("")}`);
  for (const [label, stages] of spent)
    console.log(
      `  ${label.padEnd(12)}${STAGES.map((s) => fmt(median(stages.get(s) ?? [0]), 3).padStart(15)).join("")}`,
    );
} finally {
  dir.remove();
}
