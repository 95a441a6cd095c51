/**
 * Text units: a document cut into token-sized chunks with overlap (GraphRAG: 1200 tokens, 100 overlap),
 * counted with the cl100k tokenizer (gpt-tokenizer: the same tokens as tiktoken, several times faster
 * than the js-tiktoken port). Cuts prefer a line or sentence end near the token boundary, and the next unit
 * starts at the first sentence (else word) start of the overlap, so no unit opens mid-word ("…ister to
 * his stool") and an answer quoting a unit's first sentence quotes a whole one. Also the exact token counter (the query
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

/**
 * Where the unit after `end` starts: the first token of the overlap that follows a sentence or line end,
 * else the first that opens a word (cl100k tokens carry their leading space), else the overlap's start.
 */
function niceStart(enc: Tokenizer, tokens: number[], from: number, end: number): number {
  let word = -1;
  for (let i = Math.max(from, 1); i < end; i++) {
    const before = enc.decode([tokens[i - 1] as number]);
    const opens = /^\s/.test(enc.decode([tokens[i] as number])) || /\s$/.test(before);
    if (opens && (/\n\s*$/.test(before) || /[.!?]["'’”)_]*\s*$/.test(before))) return i;
    if (word < 0 && opens) word = i;
  }
  return word >= 0 ? word : from;
}

/** A cut point within the last fifth of the window at a paragraph or sentence end, if one exists. */
function niceCut(enc: Tokenizer, window: number[], minimum: number): number {
  const floor = Math.max(minimum, Math.floor(window.length * 0.8));
  for (let i = window.length - 1; i > floor; i--) {
    const piece = enc.decode([window[i] as number]);
    if (/\n\s*$/.test(piece) || /[.!?]["'’”]?\s*$/.test(piece)) return i + 1;
  }
  return window.length;
}
