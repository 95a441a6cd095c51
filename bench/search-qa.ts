/**
 * Search answers on books no one tuned for (issue 31). Five public-domain books are indexed offline by the
 * real pipeline, then every question of one half of the set (tests/fixtures/books/qa/) is asked of the
 * offline answerer (local or global per question) and of a plain BM25-sentence baseline in the same run,
 * and, when a model is configured (a provider key, or OLLAMA_BASE_URL with a pulled model), of the model
 * path over the same index. Prints, per mode and kind: how often the answer names the expected fact,
 * citation precision, correct and false refusals, hedged answers (the fact named after an opening that
 * says the text does not say it), and retrieval recall (the fact in the context given).
 *
 * The test half is FROZEN and the default: report only its figures; tune on `--half dev`, whose answers
 * `--verbose` prints one per line (the test half is only ever printed in aggregate); validate on
 * `--half dev2`, a second set written later, by its aggregate (its answers print only with `--verbose`);
 * `--half dev3`, a third set nobody tunes on, is the lead's held-out check, read by its aggregate alike;
 * `--half dev4`, a fourth set written from the books alone, is for tuning the fact path (`--verbose` freely);
 * `--half dev5` asks about a sixth book, outside the five and every tuning: aggregate only, like the test
 * half (`--verbose` prints neither); `--half dev6` about a seventh, to tune on (`--verbose` freely);
 * `--half dev7` about an eighth, held out like dev5 and untouched until its first run.
 * Aims on the test half: offline local names the fact >= 80%, global >= 70%, never below the baseline;
 * retrieval recall >= 95%.
 *
 *   bun bench/search-qa.ts [--half test|dev|dev2|dev3|dev4|dev5|dev6|dev7|both] [--model provider/model|offline] [--verbose]
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createEnvSource, readDotenv } from "../server/config/env.ts";
import { ModelService } from "../server/models/service.ts";
import type { ModelChoice } from "../server/search/model-calls.ts";
import { chooseModel } from "../server/search/services/models.ts";
import { tempDir } from "../tests/helpers/tmp.ts";
import { SentenceBaseline } from "./lib/qa-baseline.ts";
import { askBaseline, askSearch, indexBooks, runAll } from "./lib/qa-run.ts";
import { formatTable, type Outcome, tally } from "./lib/qa-score.ts";
import { ALL_BOOKS, loadHalf, QA_SETS, type QaSet } from "./lib/qa-set.ts";
import { fmt } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    half: { type: "string", default: "test" },
    model: { type: "string" },
    verbose: { type: "boolean", default: false },
  },
});
const halves: QaSet[] = values.half === "both" ? ["test", "dev"] : [values.half as QaSet];
if (!halves.every((h) => QA_SETS.includes(h)))
  throw new Error("--half is test, dev, dev2, dev3, dev4, dev5, dev6, dev7 or both");

const LABELS: Record<QaSet, string> = {
  test: "half (frozen)",
  dev: "half",
  dev2: "(validation set)",
  dev3: "(held-out set)",
  dev4: "(tuning set)",
  dev5: "(held-out book)",
  dev6: "(tuning book)",
  dev7: "(fresh held-out book)",
};
/** Sets read in aggregate only: `--verbose` prints none of their answers. */
const HELD_OUT: readonly QaSet[] = ["test", "dev5", "dev7"];

/** The model path: the model named, else the configured default the server would use; none offline. */
async function modelPath(): Promise<ModelChoice | undefined> {
  if (values.model === "offline") return undefined;
  const models = new ModelService(createEnvSource(process.env, readDotenv(join(import.meta.dir, ".."))));
  await models.refreshLocalModels();
  return chooseModel(models, values.model);
}

const load = loadavg().map((l) => fmt(l, 1));
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${load.join(" ")} (1, 5, 15 min)`,
);
const dir = tempDir("atrium-bench-qa-");
try {
  const started = performance.now();
  // The books the halves ask about: the five, or dev5's and dev6's one each.
  const sets = new Map(halves.map((h) => [h, loadHalf(h)]));
  const asked = new Set([...sets.values()].flat().map((q) => q.book));
  const books = ALL_BOOKS.filter((b) => asked.has(b));
  const indexed = await indexBooks(dir.path, books);
  const seconds = (performance.now() - started) / 1000;
  const tokens = indexed.built.reduce((sum, b) => sum + b.tokens, 0);
  console.log(
    `indexed ${books.length} books offline, ${fmt(tokens)} tokens in ${fmt(seconds, 1)} s (${fmt(tokens / seconds / 1000, 0)}k tokens/s): ` +
      indexed.built
        .map((b) => `${b.book} ${fmt(b.seconds, 2)} s, ${b.entities} entities, ${b.communities} communities`)
        .join("; "),
  );
  const baseline = new SentenceBaseline(indexed.texts);
  const model = await modelPath();
  console.log(
    model
      ? `model path: ${model.model.provider}/${model.model.id} answers over the same offline index`
      : "model path: no model configured (a provider key, or OLLAMA_BASE_URL with a pulled model), so offline and baseline only",
  );

  for (const half of halves) {
    const questions = sets.get(half) ?? [];
    const t0 = performance.now();
    const offline = await runAll(questions, (q) => askSearch(indexed, q));
    const offlineMs = performance.now() - t0;
    const plain = await runAll(questions, (q) => askBaseline(baseline, q, indexed.normalised.get(q.book)));
    const systems = [
      { name: "offline", outcomes: offline },
      { name: "BM25 sentence", outcomes: plain },
    ];
    if (model)
      systems.push({ name: "model", outcomes: await runAll(questions, (q) => askSearch(indexed, q, model)) });
    console.log(
      `\n## ${half} ${LABELS[half]}: ${questions.length} questions; offline answers in ${fmt(offlineMs, 0)} ms\n`,
    );
    console.log(formatTable(systems));
    console.log(`\n${aims(offline, plain)}`);
    if (values.verbose && !HELD_OUT.includes(half))
      for (const [i, q] of questions.entries()) {
        const o = offline[i] as Outcome;
        const mark = o.answerable
          ? o.named
            ? "named"
            : o.recalled
              ? "MISSED"
              : "NOT RETRIEVED"
          : o.refused
            ? "refused"
            : "ANSWERED";
        console.log(`${q.id} [${q.mode}] ${mark}: ${q.question}\n    ${o.opening}`);
      }
  }
  baseline.close();
  indexed.close();
} finally {
  dir.remove();
}

/** The aims against this run's figures: each mode against the baseline in the same mode. */
function aims(offline: Outcome[], plain: Outcome[]): string {
  const share = (outcomes: Outcome[], mode?: string) => {
    const t = tally(outcomes.filter((o) => !mode || o.mode === mode));
    return t.answerable ? t.named / t.answerable : 0;
  };
  const t = tally(offline);
  const recall = t.answerable ? t.recalled / t.answerable : 0;
  const verdict = (ok: boolean) => (ok ? "met" : "not met");
  const mode = (name: string, aim: number) => {
    const value = share(offline, name);
    const base = share(plain, name);
    return `offline ${name} names the fact ${fmt(100 * value, 0)}% (aim >= ${fmt(100 * aim, 0)}%: ${verdict(value >= aim)}; baseline ${fmt(100 * base, 0)}%, never below: ${verdict(value >= base)})`;
  };
  return [
    mode("local", 0.8),
    mode("global", 0.7),
    `retrieval recall ${fmt(100 * recall, 0)}% (aim >= 95%: ${verdict(recall >= 0.95)})`,
  ].join("\n");
}
