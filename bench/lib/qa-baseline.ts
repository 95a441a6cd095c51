/**
 * The plain baseline the search answers are measured against: a book cut into sentences, ranked by SQLite
 * FTS5's BM25 on the question's words (Porter stems), the top sentence as the answer, no answer when no
 * sentence shares a word with the question. Self-contained on purpose: tuning the answerer (its sentence
 * splitter, its query terms) must not move the baseline it is compared with.
 */
import { Database } from "bun:sqlite";
import type { ContextData } from "./qa-score.ts";
import type { Book } from "./qa-set.ts";

/** Words that match everything and say nothing. */
const STOP = new Set(
  `a about after all also an and any are as at be been but by can could did do does for from had has have
   he her him his how i if in into is it its me my no not of on or our she so than that the their them then
   there these they this those to under up upon us was we were what when where which while who whom whose
   why will with would you your`.split(/\s+/),
);

/** "Mr. Darcy" and "St. John" do not end a sentence. */
const ABBREVIATION = /\b(Mr|Mrs|Ms|Dr|St|Messrs|M)\./g;

export function baselineSentences(text: string): string[] {
  return text
    .replace(/\r\n?/g, "\n")
    .split(/\n\s*\n/)
    .flatMap(
      (paragraph) =>
        paragraph
          .replace(/\s+/g, " ")
          .replace(ABBREVIATION, "$1\u0000")
          .match(/[^.!?]+[.!?]+["'’”)_]*|[^.!?]+$/g) ?? [],
    )
    .map((s) => s.replaceAll("\u0000", ".").trim())
    .filter((s) => s.length > 1);
}

export function baselineTerms(question: string): string[] {
  const words = question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length > 1 && !STOP.has(w)))];
}

export class SentenceBaseline {
  private readonly db = new Database(":memory:");

  constructor(books: Map<Book, string>) {
    this.db.run(
      "CREATE VIRTUAL TABLE sentences USING fts5(book UNINDEXED, text, tokenize='porter unicode61')",
    );
    const insert = this.db.prepare("INSERT INTO sentences (book, text) VALUES (?, ?)");
    this.db.transaction(() => {
      for (const [book, text] of books) for (const s of baselineSentences(text)) insert.run(book, s);
    })();
  }

  /** The answer (top sentence) and the top `k` sentences as a context table, each row citable by rank. */
  ask(book: Book, question: string, k = 10): { text: string; context: ContextData } {
    const terms = baselineTerms(question);
    const rows =
      terms.length === 0
        ? []
        : this.db
            .query<{ text: string }, [string, string, number]>(
              "SELECT text FROM sentences WHERE sentences MATCH ? AND book = ? ORDER BY bm25(sentences) LIMIT ?",
            )
            .all(terms.map((t) => `"${t}"`).join(" OR "), book, k);
    const context: ContextData = {
      sentences: rows.map((r, i) => ({ id: String(i + 1), text: r.text, in_context: true })),
    };
    const top = rows[0];
    return {
      text: top ? `${top.text} [Data: Sentences (1)]` : "I am sorry but I am unable to answer this question.",
      context,
    };
  }

  close(): void {
    this.db.close();
  }
}
