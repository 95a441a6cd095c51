/**
 * Runs the question set through the real search code: each book indexed offline by the real pipeline
 * (`runIndex`) into its own index of one SQLite file, then every question asked of the local or global
 * search service as the API asks it (global at its default community level), offline or with a model,
 * and of the BM25-sentence baseline. Returns scored outcomes; printing is the bench's business.
 */
import { join } from "node:path";
import { fileText } from "../../server/search/indexing/documents.ts";
import { DEFAULT_PARSE_LIMITS, DocumentParser } from "../../server/search/indexing/parser.ts";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { countTokens } from "../../server/search/indexing/units.ts";
import { searchMigrations } from "../../server/search/migrations/index.ts";
import type { ModelChoice } from "../../server/search/model-calls.ts";
import { drain } from "../../server/search/services/answer.ts";
import { globalSearch } from "../../server/search/services/global.ts";
import { localSearch } from "../../server/search/services/local.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import type { IndexRow } from "../../server/search/types.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";
import type { SentenceBaseline } from "./qa-baseline.ts";
import { type Outcome, scoreAnswer } from "./qa-score.ts";
import { type Book, bookPath, normalise, type Question } from "./qa-set.ts";

const OWNER = "local";

export interface IndexedBooks {
  stores: { search: SearchStore; graph: SearchGraphStore };
  indexes: Map<Book, IndexRow>;
  texts: Map<Book, string>;
  /** Each book's text normalised once, for telling quotes from refusals. */
  normalised: Map<Book, string>;
  /** Per book: tokens, seconds, and what the index holds. */
  built: { book: Book; tokens: number; seconds: number; entities: number; communities: number }[];
  close(): void;
}

/** Indexes each book offline into `dir`/qa.db, read as the `index` command reads a .txt file. */
export async function indexBooks(dir: string, books: readonly Book[]): Promise<IndexedBooks> {
  const db = openDatabase(join(dir, "qa.db"));
  migrate(db, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
  const search = new SearchStore(sqlitePort(db), db);
  const graph = new SearchGraphStore(search.db);
  const indexes = new Map<Book, IndexRow>();
  const texts = new Map<Book, string>();
  const normalised = new Map<Book, string>();
  const built: IndexedBooks["built"] = [];
  // The books are .txt: the parser (PDF and HTML, in a subprocess) is never started, but fileText takes one.
  const reader = new DocumentParser(DEFAULT_PARSE_LIMITS);
  for (const book of books) {
    const path = bookPath(book);
    const read = await fileText(path, new Uint8Array(await Bun.file(path).arrayBuffer()), reader);
    if ("reason" in read) throw new Error(`${path}: ${read.reason}`);
    texts.set(book, read.text);
    normalised.set(book, normalise(read.text));
    const started = performance.now();
    const summary = await runIndex(search, OWNER, book, [{ title: `${book}.txt`, text: read.text }]);
    built.push({
      book,
      tokens: countTokens(read.text),
      seconds: (performance.now() - started) / 1000,
      entities: summary.entities,
      communities: summary.communities,
    });
    const index = await search.findIndex(OWNER, book);
    if (!index) throw new Error(`no index for ${book}`);
    indexes.set(book, index);
  }
  reader.close();
  return { stores: { search, graph }, indexes, texts, normalised, built, close: () => db.close() };
}

/** One question asked of the search service its mode names, offline (no model) or with a model. */
export async function askSearch(indexed: IndexedBooks, q: Question, model?: ModelChoice): Promise<Outcome> {
  const index = indexed.indexes.get(q.book);
  if (!index) throw new Error(`${q.book} is not indexed`);
  const started = performance.now();
  const answer =
    q.mode === "local"
      ? await localSearch(indexed.stores, index, q.question, model)
      : await globalSearch(indexed.stores, index, q.question, model);
  const text = await drain(answer);
  return scoreAnswer(q, text, answer.context_data, {
    ms: performance.now() - started,
    book: indexed.normalised.get(q.book),
  });
}

export function askBaseline(baseline: SentenceBaseline, q: Question, book?: string): Outcome {
  const started = performance.now();
  const { text, context } = baseline.ask(q.book, q.question);
  return scoreAnswer(q, text, context, { ms: performance.now() - started, book });
}

/** Every question of a half through one answerer, in order. */
export async function runAll(
  questions: Question[],
  ask: (q: Question) => Promise<Outcome> | Outcome,
): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const q of questions) out.push(await ask(q));
  return out;
}
