/**
 * How the terminal client looks: colours (chalk, which turns itself off where the output is not a
 * colour terminal), syntax-highlighted code (cli-highlight), and the themes pi-tui's editor and
 * Markdown components take.
 */

import { stripVTControlCharacters } from "node:util";
import type { EditorTheme, MarkdownTheme } from "@mariozechner/pi-tui";
import chalk from "chalk";
import { highlight, supportsLanguage } from "cli-highlight";

export const style = {
  dim: (s: string) => chalk.dim(s),
  muted: (s: string) => chalk.gray(s),
  accent: (s: string) => chalk.cyan(s),
  user: (s: string) => chalk.bold.blue(s),
  ok: (s: string) => chalk.green(s),
  warn: (s: string) => chalk.yellow(s),
  error: (s: string) => chalk.red(s),
  bold: (s: string) => chalk.bold(s),
  thinking: (s: string) => chalk.dim.italic(s),
};

/** Highlighted code as lines; unknown languages stay plain (cli-highlight's guessing colours prose). */
export function highlightCode(code: string, lang = "python"): string[] {
  if (!lang || !supportsLanguage(lang)) return code.split("\n");
  try {
    return highlight(code, { language: lang, ignoreIllegals: true }).split("\n");
  } catch {
    return code.split("\n");
  }
}

export const markdownTheme: MarkdownTheme = {
  heading: (s) => chalk.bold.cyan(s),
  link: (s) => chalk.underline.cyan(s),
  linkUrl: (s) => chalk.gray(s),
  code: (s) => chalk.yellow(s),
  codeBlock: (s) => s,
  codeBlockBorder: (s) => chalk.gray(s),
  quote: (s) => chalk.italic(s),
  quoteBorder: (s) => chalk.gray(s),
  hr: (s) => chalk.gray(s),
  listBullet: (s) => chalk.cyan(s),
  bold: (s) => chalk.bold(s),
  italic: (s) => chalk.italic(s),
  strikethrough: (s) => chalk.strikethrough(s),
  underline: (s) => chalk.underline(s),
  highlightCode: (code, lang) => highlightCode(code, lang ?? ""),
};

export const editorTheme: EditorTheme = {
  borderColor: (s) => chalk.gray(s),
  selectList: {
    selectedPrefix: (s) => chalk.cyan(s),
    selectedText: (s) => chalk.cyan(s),
    description: (s) => chalk.gray(s),
    scrollInfo: (s) => chalk.gray(s),
    noMatch: (s) => chalk.gray(s),
  },
};

/**
 * Text from the server made safe to print: model output, a program's output or a session title could
 * carry terminal escapes (retitle the window, write the clipboard, move the cursor over what is shown).
 * Escape sequences and control characters go; newlines and tabs stay.
 */
export function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return stripVTControlCharacters(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}

/** Every string inside a parsed JSON value, cleaned (the events a view draws). */
export function cleanDeep<T>(value: T): T {
  if (typeof value === "string") return clean(value) as T;
  if (Array.isArray(value)) return value.map(cleanDeep) as T;
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cleanDeep(v)])) as T;
  return value;
}

/** A byte count for people. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A value on one line, cut to `max` characters (tool inputs and outputs). */
export function preview(value: unknown, max = 200): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
