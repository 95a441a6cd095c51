/**
 * Input documents for indexing: files and directories read by type (file-text.ts: text and Markdown,
 * HTML stripped to its text, PDF text), or uploaded strings. In a directory, files named by an
 * `.atriumignore` (gitignore syntax, the `ignore` package; nested files apply below their folder) or by
 * an `--exclude` pattern are left out, as are hidden entries and types indexing does not read; every file
 * left out is listed with the reason, so the summary says what was not indexed and why. Binary or
 * undecodable content is skipped rather than indexed as garbage.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, relative, resolve } from "node:path";
import type { Ignore, default as ignoreRules } from "ignore";
import { kindOf } from "./file-text.ts";
import type { DocumentParser } from "./parser.ts";

/** What reads PDF and HTML (parser.ts: a bounded subprocess per document). */
export type TextReader = Pick<DocumentParser, "parse">;

export interface InputDocument {
  title: string;
  text: string;
}

/** A file indexing left out, and why. */
export interface SkippedFile {
  path: string;
  reason: string;
}

export const IGNORE_FILE = ".atriumignore";

/** Why a text cannot be indexed, or undefined when it can. */
export function rejectReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "binary content (NUL bytes)";
  const replacements = text.match(/\uFFFD/g)?.length ?? 0;
  if (replacements > 0 && replacements > text.length / 100) return "not valid UTF-8 text";
  if (text.trim() === "") return "empty";
  return undefined;
}

/**
 * Decodes a file's bytes as text, or explains why not: UTF-16 when it opens with a byte-order mark (as
 * Windows Notepad saves "Unicode"), else UTF-8, else Windows-1252, which covers Latin-1 (Project
 * Gutenberg's older "-8.txt" files, and text saved on Windows). Bytes that read as none of these, or
 * that Windows-1252 reads with control characters, are no text.
 */
export function decodeText(bytes: Uint8Array): { text: string } | { reason: string } {
  const bom =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? "utf-16le"
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? "utf-16be"
        : undefined;
  if (bom) {
    const text = strictDecode(bom, bytes);
    return text === undefined ? { reason: "not valid UTF-16 text" } : checked(text);
  }
  if (bytes.includes(0)) return { reason: "binary content (NUL bytes)" };
  const utf8 = strictDecode("utf-8", bytes);
  if (utf8 !== undefined) return checked(utf8);
  // Windows-1252 maps nearly every byte to something: control characters are what tell bytes from text.
  const text = strictDecode("windows-1252", bytes);
  if (text === undefined || hasControls(text)) return { reason: "not valid UTF-8 or Windows-1252 text" };
  return checked(text);
}

/** C0 controls other than tab, line feed, vertical tab, form feed and carriage return; DEL; the C1 ones. */
function hasControls(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 8 || (c >= 14 && c <= 31) || (c >= 127 && c <= 159)) return true;
  }
  return false;
}

function strictDecode(encoding: string, bytes: Uint8Array): string | undefined {
  try {
    // The byte-order mark is dropped (TextDecoder's default), as a reader of the file expects.
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function checked(text: string): { text: string } | { reason: string } {
  const reason = rejectReason(text);
  return reason ? { reason } : { text };
}

/** The text of one file by its type, or why it has none to index. */
export async function fileText(
  path: string,
  bytes: Uint8Array,
  reader: TextReader,
): Promise<{ text: string } | { reason: string }> {
  const ext = extname(path);
  const kind = kindOf(ext);
  if (!kind) return { reason: `unsupported file type (${ext ? ext.toLowerCase() : "no extension"})` };
  if (kind === "pdf") {
    const read = await reader.parse("pdf", bytes);
    if ("reason" in read) return read;
    return read.text.trim() ? read : { reason: "a PDF with no text layer (scanned pages need OCR)" };
  }
  const decoded = decodeText(bytes);
  if ("reason" in decoded || kind === "text") return decoded;
  // The parser reads UTF-8: a page decoded otherwise is given to it as UTF-8.
  const read = await reader.parse("html", new TextEncoder().encode(decoded.text));
  if ("reason" in read) return read;
  return read.text ? read : { reason: "HTML with no visible text" };
}

/**
 * An uploaded document: HTML by its name is read as its text (a document that cannot be read within the
 * limits is skipped with the reason); anything else is taken as text.
 */
export async function uploadedDocument(
  name: string,
  text: string,
  reader: TextReader,
): Promise<{ document: InputDocument } | { skipped: SkippedFile }> {
  if (kindOf(extname(name)) !== "html") return { document: { title: name, text } };
  const read = await reader.parse("html", new TextEncoder().encode(text));
  if ("reason" in read) return { skipped: { path: name, reason: read.reason } };
  return { document: { title: name, text: read.text } };
}

/**
 * An uploaded file read by its type, as the `index` command reads one: PDF as its text, text and
 * Markdown as they are, HTML kept as markup (the build reads it as its text by the name, as it does for
 * an uploaded string). Any other type, or a file that cannot be read, is skipped with the reason.
 */
export async function uploadedFile(
  name: string,
  bytes: Uint8Array,
  reader: TextReader,
): Promise<{ document: InputDocument } | { skipped: SkippedFile }> {
  const kind = kindOf(extname(name));
  const read = kind === "html" ? decodeText(bytes) : await fileText(name, bytes, reader);
  if ("reason" in read) return { skipped: { path: name, reason: read.reason } };
  return { document: { title: name, text: read.text } };
}

export interface ReadOptions {
  /** gitignore-style patterns matched against paths inside each directory given (`--exclude`). */
  exclude?: string[];
  /** Reads PDF and HTML. */
  reader: TextReader;
  /** Files read at once (the reader's own limit bounds its processes; this bounds files in memory). */
  parallel?: number;
}

/** Reads every indexable document under the given files and directories (recursively, sorted). */
export async function readDocuments(
  paths: string[],
  options: ReadOptions,
): Promise<{ documents: InputDocument[]; warnings: string[]; skipped: SkippedFile[] }> {
  const documents: InputDocument[] = [];
  const warnings: string[] = [];
  const skipped: SkippedFile[] = [];
  // Loaded with the first read of a folder, not with the server (docs/benchmarks.md, "Cold start").
  const { default: ignore } = await import("ignore");
  const excluded = ignore().add(options.exclude ?? []);
  const files: { file: string; title: string }[] = [];
  for (const given of paths) {
    const root = resolve(given);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(root);
    } catch {
      warnings.push(`${given}: no such file or directory`);
      continue;
    }
    if (stat.isDirectory()) files.push(...walk(ignore, root, root, [], excluded, skipped));
    else files.push({ file: root, title: basename(root) });
  }
  // A few files at a time, each read from disk only when its turn comes; results keep the sorted order.
  const results: ({ text: string } | { reason: string })[] = [];
  let next = 0;
  const lanes = Math.max(1, options.parallel ?? 1);
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = next++; i < files.length; i = next++) {
        const { file } = files[i] as { file: string };
        results[i] = await fileText(file, readFileSync(file), options.reader);
      }
    }),
  );
  files.forEach(({ file, title }, i) => {
    const read = results[i] as { text: string } | { reason: string };
    if ("reason" in read) {
      skipped.push({ path: title, reason: read.reason });
      // A file of a type indexing reads that could not be read is worth a warning; other types are not.
      if (kindOf(extname(file))) warnings.push(`${title}: skipped, ${read.reason}`);
    } else documents.push({ title, text: read.text });
  });
  return { documents, warnings, skipped };
}

interface Rules {
  dir: string;
  rules: Ignore;
}

function walk(
  ignore: typeof ignoreRules,
  root: string,
  dir: string,
  inherited: Rules[],
  excluded: Ignore,
  skipped: SkippedFile[],
): { file: string; title: string }[] {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  const rules = [...inherited];
  if (entries.some((e) => e.name === IGNORE_FILE && e.isFile()))
    rules.push({ dir, rules: ignore().add(readFileSync(join(dir, IGNORE_FILE), "utf8")) });
  const out: { file: string; title: string }[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const title = relative(root, path);
    const isDir = entry.isDirectory();
    if (entry.name === IGNORE_FILE) continue;
    if (entry.name.startsWith(".")) {
      skipped.push({ path: title, reason: isDir ? "hidden folder" : "hidden file" });
      continue;
    }
    const asPath = isDir ? `${title}/` : title;
    if (excluded.ignores(asPath)) {
      skipped.push({ path: title, reason: "excluded by --exclude" });
      continue;
    }
    const rule = rules.find((r) => r.rules.ignores(`${relative(r.dir, path)}${isDir ? "/" : ""}`));
    if (rule) {
      skipped.push({ path: title, reason: `ignored by ${relative(root, join(rule.dir, IGNORE_FILE))}` });
      continue;
    }
    if (isDir) out.push(...walk(ignore, root, path, rules, excluded, skipped));
    else if (entry.isFile()) out.push({ file: path, title });
  }
  return out;
}
