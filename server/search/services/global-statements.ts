/**
 * A theme question names its subject ("What is the ocean to the author?", "How does he see himself?"),
 * and the book's own answer is usually a sentence that states what that subject is: the subject beside a
 * form of "to be" ("The ocean is a wilderness…", "I am thy creature", "how dangerous is the acquirement of
 * knowledge"). Passage retrieval ranks sentences by how many of the question's terms they hold, so when a
 * subject is common in the book such a statement sits among dozens of sentences that merely mention it.
 * These helpers find the retrieved passages that state the subject, so the global answer can give a few
 * of them beside its best passages.
 */
import type { Passage } from "./passages.ts";

const TO_BE = "(?:is|are|was|were|am|be|been)";
/** A statement opens its sentence (or its first clause): "The ocean is…", "Remember that I am thy…". */
const OPENING = 30;

/**
 * Whether a sentence opens by stating one of the terms: "term is/was …" or "is/was [one word] term",
 * within its first words. Further in, the same words are usually an aside ("none would have been so
 * wicked"), not what the sentence is about.
 */
export function statesSubject(sentence: string, terms: string[]): boolean {
  const text = sentence.replace(/^[\s"'“‘(_—-]+/u, "");
  return terms.some((raw) => {
    const term = raw.replace(/[^\p{L}\p{N}]/gu, "");
    if (term.length < 3) return false;
    // A plural or possessive ending ("oceans", "creature's") is the same subject.
    const word = `${term}(?:s|es|'s|’s)?`;
    const found = new RegExp(
      `\\b${word}\\s+${TO_BE}\\b|\\b${TO_BE}\\s+(?:\\p{L}+\\s+)?${word}\\b`,
      "iu",
    ).exec(text);
    return found !== null && found.index < OPENING;
  });
}

/** The passages that state a term of the question, best covered first (stable), at most `limit`. */
export function statements(passages: Passage[], terms: string[], limit: number): Passage[] {
  return passages
    .map((p, i) => ({ p, i }))
    .filter(({ p }) => statesSubject(p.text, terms))
    .sort((a, b) => b.p.coverage - a.p.coverage || a.i - b.i)
    .slice(0, limit)
    .map(({ p }) => p);
}
