/**
 * Text units: a document cut into token-sized chunks with overlap (GraphRAG: 1200 tokens, 100 overlap),
 * counted with the cl100k tokenizer (gpt-tokenizer: the same tokens as tiktoken, several times faster
 * than the js-tiktoken port). Cuts prefer a sentence or paragraph end near the token boundary (a line end
 * only when there is none), and the next unit starts at the first sentence (else line, else word) start of
 * the overlap, so no unit opens mid-word ("…ister to his stool") or, in a hard-wrapped book, mid-sentence,
 * and an answer quoting a unit's first sentence quotes a whole one. Also the exact token counter (the query
 * services estimate instead).
 */

export interface Tokenizer {
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

let encoder: Tokenizer | undefined;

/** The tokenizer, loaded on first use: its tables take a moment, which a server start should not pay. */
export function tokenizer(): Tokenizer {
  encoder ??= require("gpt-tokenizer/encoding/cl100k_base") as Tokenizer;
  return encoder;
}

export function countTokens(text: string): number {
  return tokenizer().encode(text).length;
}

export interface UnitOptions {
  size: number;
  overlap: number;
}

export const DEFAULT_UNITS: UnitOptions = { size: 1200, overlap: 100 };

export interface TextUnit {
  text: string;
  tokens: number;
}

export function splitUnits(text: string, options: UnitOptions = DEFAULT_UNITS): TextUnit[] {
  const { size, overlap } = options;
  if (size < 1 || overlap < 0 || overlap >= size) throw new Error("unit size must exceed the overlap");
  const enc = tokenizer();
  const tokens = enc.encode(text);
  const units: TextUnit[] = [];
  let start = 0;
  while (start < tokens.length) {
    let end = Math.min(start + size, tokens.length);
    if (end < tokens.length) end = start + niceCut(enc, tokens.slice(start, end), size - overlap);
    const piece = enc.decode(tokens.slice(start, end)).trim();
    if (piece) units.push({ text: piece, tokens: end - start });
    if (end >= tokens.length) break;
    start = Math.max(niceStart(enc, tokens, end - overlap, end), start + 1);
  }
  return units;
}

/** A token that ends a sentence (".", "!\"", "?’\n") or a paragraph ("\n\n"). */
const SENTENCE_END = /[.!?]["'’”)_]*\s*$|\n\s*\n\s*$/;
/** A token that ends a line: in a hard-wrapped book, most lines end mid-sentence. */
const LINE_END = /\n\s*$/;

/**
 * Where the unit after `end` starts: the first token of the overlap that follows a sentence or paragraph
 * end, else one that follows a line end, else the first that opens a word (cl100k tokens carry their
 * leading space), else the overlap's start. A line end alone would open most units of a hard-wrapped
 * book mid-sentence ("nothing ever happened on this globe…").
 */
function niceStart(enc: Tokenizer, tokens: number[], from: number, end: number): number {
  let line = -1;
  let word = -1;
  for (let i = Math.max(from, 1); i < end; i++) {
    const before = enc.decode([tokens[i - 1] as number]);
    const opens = /^\s/.test(enc.decode([tokens[i] as number])) || /\s$/.test(before);
    if (!opens) continue;
    if (SENTENCE_END.test(before)) return i;
    if (line < 0 && LINE_END.test(before)) line = i;
    if (word < 0) word = i;
  }
  return line >= 0 ? line : word >= 0 ? word : from;
}

/** A cut point within the last fifth of the window at a sentence or paragraph end, else a line end. */
function niceCut(enc: Tokenizer, window: number[], minimum: number): number {
  const floor = Math.max(minimum, Math.floor(window.length * 0.8));
  let line = -1;
  for (let i = window.length - 1; i > floor; i--) {
    const piece = enc.decode([window[i] as number]);
    if (SENTENCE_END.test(piece)) return i + 1;
    if (line < 0 && LINE_END.test(piece)) line = i + 1;
  }
  return line >= 0 ? line : window.length;
}
