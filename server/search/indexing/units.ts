/**
 * Text units: a document cut into token-sized chunks with overlap (GraphRAG: 1200 tokens, 100 overlap),
 * counted with the cl100k tokenizer (gpt-tokenizer: the same tokens as tiktoken, several times faster
 * than the js-tiktoken port). Cuts prefer a line or sentence end near the token boundary so a unit
 * rarely starts mid-sentence. Also the exact token counter (the query services estimate instead).
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
    start = Math.max(end - overlap, start + 1);
  }
  return units;
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
