/**
 * `bun server/main.ts index <files or dirs> [--name N] [--data-dir D] [--owner ID] [--model provider/model]`:
 * builds (or incrementally updates) a search index in the data dir's app.db, with a progress bar per
 * phase (units, extraction, communities, reports) and a summary. Offline extraction unless --model is given.
 * The app opens the data dir (server/index-command.ts: its own context and migrations); this module
 * parses, indexes and reports.
 */

import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { Value } from "@sinclair/typebox/value";
import cliProgress from "cli-progress";
import {
  DEFAULT_INDEX_NAME,
  INDEX_NAME_PATTERN,
  IndexName,
  type IndexSummary,
} from "../../../schemas/search.ts";
import { programName } from "../../lib/program.ts";
import type { EmbeddingsClient } from "../../models/embeddings.ts";
import { type ModelService, UnknownModelError } from "../../models/service.ts";
import type { Db } from "../../storage/db/port.ts";
import { SearchStore } from "../stores/search-store.ts";
import { readDocuments, type TextReader } from "./documents.ts";
import { HTML_EXTENSIONS, PDF_EXTENSIONS, TEXT_EXTENSIONS } from "./file-text.ts";
import { type IndexOptions, type Phase, runIndex } from "./pipeline.ts";

const usage =
  () => `usage: ${programName()} index <files or directories> [--name N] [--data-dir D] [--owner ID] [--model provider/model] [--exclude PATTERN]...

Indexes documents for search (.txt and .md as text, .html stripped to its text, .pdf text): text units,
entities and relationships, communities, reports, FTS5. In a folder, files an .atriumignore names
(gitignore syntax) are left out; the summary lists every file not indexed and why.
Re-running skips unchanged documents. Offline (rule-based extraction, extractive reports) unless --model.
  --name N        index name (default "default")
  --data-dir D    data directory (default $APP_DATA_DIR or ~/.local/share/atrium)
  --owner ID      owner of the index (default "local", the local-mode user)
  --model ID      extract and write reports with this model (provider/model)
  --exclude P     leave out paths matching P (gitignore syntax; repeatable)

  ${programName()} index --list [--name N] [--data-dir D] [--owner ID]
  ${programName()} index --remove TITLE [--remove TITLE]... [--name N] [--data-dir D] [--owner ID]
List the index's documents (title, characters, units), or take documents out by the title --list shows
without a rebuild: their units and what only they supported go, and only the communities they touched
get new reports. To replace a document, index its file again: only a changed one is re-extracted.`;

/** The data dir as the server opens it, migrated; `close` releases the database. */
export interface IndexTarget {
  /** The app's database port (app.db, or PostgreSQL from APP_DATABASE_URL). */
  database: Db;
  /** app.db's bun:sqlite connection when the port is SQLite (sqlite-vec loads into it). */
  sqlite?: Database;
  models: ModelService;
  /** The policy's embeddings endpoint, when it names one: entities are embedded as the server would. */
  embeddings?: EmbeddingsClient;
  close(): Promise<void>;
}

/** The data dir's reader of PDF and HTML (its policy's limits); `parallel`: files read at once. */
export interface IndexReader {
  reader: TextReader & { close(): void };
  parallel: number;
}

/**
 * `open(dataDir)`: the data dir named by `--data-dir` (undefined: the server's default); `reader(dataDir)`
 * reads PDF and HTML within that data dir's policy limits, before the data dir is opened.
 */
export async function indexCliMain(
  argv: string[],
  open: (dataDir: string | undefined) => Promise<IndexTarget>,
  reader: (dataDir: string | undefined) => IndexReader,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`atrium index: ${(error as Error).message}\n${usage()}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if ((values.list || values.remove) && positionals.length > 0) {
    process.stderr.write(`atrium index: --list and --remove take no files\n${usage()}\n`);
    return 2;
  }
  if (positionals.length === 0 && !values.list && !values.remove) {
    process.stderr.write(`atrium index: name at least one file or directory\n${usage()}\n`);
    return 2;
  }
  const name = values.name ?? DEFAULT_INDEX_NAME;
  // The routes' schema, so the command accepts exactly the names a request may use.
  if (!Value.Check(IndexName, name)) {
    process.stderr.write(`atrium index: --name must match ${INDEX_NAME_PATTERN}\n`);
    return 2;
  }
  if (values.list || values.remove)
    return documentsCommand(await open(values["data-dir"]), values.owner ?? "local", name, values.remove);
  // Every named path must exist, and together they must hold a text document: otherwise say so and stop
  // before the data dir is opened, so a typo leaves no empty index behind.
  const missing = positionals.filter((path) => !existsSync(path));
  if (missing.length > 0) {
    for (const path of missing) process.stderr.write(`atrium index: ${path}: no such file or directory\n`);
    process.stderr.write("atrium index: nothing was indexed\n");
    return 1;
  }
  const read = reader(values["data-dir"]);
  let found: Awaited<ReturnType<typeof readDocuments>>;
  try {
    found = await readDocuments(positionals, {
      exclude: values.exclude,
      reader: read.reader,
      parallel: read.parallel,
    });
  } finally {
    read.reader.close();
  }
  const { documents, warnings, skipped } = found;
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  if (documents.length === 0) {
    for (const file of skipped) process.stderr.write(`atrium index: ${file.path}: ${file.reason}\n`);
    process.stderr.write(
      `atrium index: no documents (${[...TEXT_EXTENSIONS, ...HTML_EXTENSIONS, ...PDF_EXTENSIONS].join(", ")}) in ${positionals.join(", ")}; nothing was indexed\n`,
    );
    return 1;
  }
  const target = await open(values["data-dir"]);
  try {
    let model: IndexOptions["model"];
    if (values.model) {
      try {
        model = { models: target.models, model: await target.models.resolve(values.model) };
      } catch (error) {
        if (!(error instanceof UnknownModelError)) throw error;
        process.stderr.write(`atrium index: ${error.message}\n`);
        return 2;
      }
    }
    const progress = progressReporter();
    const summary = await runIndex(
      new SearchStore(target.database, target.sqlite),
      values.owner ?? "local",
      name,
      documents,
      {
        model,
        embeddings: target.embeddings,
        onProgress: progress.update,
      },
    );
    progress.stop();
    for (const warning of summary.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(
      formatSummary({
        ...summary,
        warnings: [...warnings, ...summary.warnings],
        skipped: [...skipped, ...summary.skipped],
      }),
    );
    return 0;
  } finally {
    await target.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      "data-dir": { type: "string" },
      owner: { type: "string" },
      model: { type: "string" },
      exclude: { type: "string", multiple: true },
      list: { type: "boolean" },
      remove: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** `--list` (no titles) or `--remove TITLE...`: every title must be in the index before any goes. */
async function documentsCommand(target: IndexTarget, owner: string, name: string, remove?: string[]) {
  try {
    const store = new SearchStore(target.database, target.sqlite);
    const index = await store.findIndex(owner, name);
    if (!index) {
      process.stderr.write(`atrium index: no index "${name}"\n`);
      return 1;
    }
    const documents = await store.listDocuments(index);
    if (!remove) {
      for (const d of documents) process.stdout.write(`${d.name}\t${d.chars} chars\t${d.units} units\n`);
      return 0;
    }
    const unknown = remove.filter((title) => !documents.some((d) => d.name === title));
    if (unknown.length > 0) {
      for (const title of unknown)
        process.stderr.write(`atrium index: "${name}" has no document "${title}"\n`);
      process.stderr.write("atrium index: nothing was removed (--list shows the titles)\n");
      return 1;
    }
    const summary = await runIndex(store, owner, name, [], { remove, embeddings: target.embeddings });
    process.stdout.write(formatSummary(summary));
    return 0;
  } finally {
    await target.close();
  }
}

/** What each phase's count counts: splitting goes document by document, extraction unit by unit, ... */
const PHASE_COUNTS: Record<Phase, string> = {
  units: "documents",
  extraction: "text units",
  communities: "graph",
  reports: "communities",
};

/** Bars on a terminal; one line per finished phase otherwise (logs, CI). */
function progressReporter() {
  const tty = Boolean(process.stderr.isTTY);
  const multi = tty
    ? new cliProgress.MultiBar(
        {
          format: " {phase} |{bar}| {value}/{total} {counts}",
          hideCursor: true,
          clearOnComplete: false,
          stream: process.stderr,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const bars = new Map<Phase, cliProgress.SingleBar>();
  const finished = new Set<Phase>();
  return {
    update(phase: Phase, done: number, total: number) {
      if (multi) {
        let bar = bars.get(phase);
        if (!bar) {
          bar = multi.create(total, 0, { phase: phase.padEnd(11), counts: PHASE_COUNTS[phase] });
          bars.set(phase, bar);
        }
        bar.setTotal(Math.max(total, 1));
        bar.update(total === 0 ? 1 : done);
      } else if (done >= total && !finished.has(phase)) {
        finished.add(phase);
        process.stderr.write(`${phase}: ${done}/${total} ${PHASE_COUNTS[phase]}\n`);
      }
    },
    stop() {
      multi?.stop();
    },
  };
}

export function formatSummary(s: IndexSummary): string {
  const modularity = s.modularity.map((q, level) => `level ${level}: ${q.toFixed(3)}`).join(", ") || "n/a";
  return `index "${s.index}"
  documents      ${s.documents} (${s.documents_indexed} indexed, ${s.documents_unchanged} unchanged${s.documents_removed === undefined ? "" : `, ${s.documents_removed} removed`})
  units          ${s.units}
  entities       ${s.entities}
  relationships  ${s.relationships}
  communities    ${s.communities} in ${s.levels} level(s); modularity ${modularity}
  reports        ${s.reports}
${s.vectors === undefined ? "" : `  vectors        ${s.vectors} (entities embedded for local search)\n`}  seconds        ${s.seconds}
${skippedLines(s.skipped)}`;
}

const SHOWN_SKIPPED = 20;

/** What was not indexed and why, a line each (the first 20, then a count). */
function skippedLines(skipped: IndexSummary["skipped"]): string {
  if (skipped.length === 0) return "";
  const lines = skipped.slice(0, SHOWN_SKIPPED).map((s) => `    ${s.path}: ${s.reason}\n`);
  const more = skipped.length > SHOWN_SKIPPED ? `    ... and ${skipped.length - SHOWN_SKIPPED} more\n` : "";
  return `  skipped        ${skipped.length}\n${lines.join("")}${more}`;
}
