/**
 * Input documents for indexing: text (txt, md) from files and directories, or uploaded strings. Binary or
 * undecodable content is skipped with a warning rather than indexed as garbage.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, relative, resolve } from "node:path";

export interface InputDocument {
  title: string;
  text: string;
}

export const TEXT_EXTENSIONS = new Set([".txt", ".md", ".markdown", ".text"]);

/** Why a text cannot be indexed, or undefined when it can. */
export function rejectReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "binary content (NUL bytes)";
  const replacements = text.match(/\uFFFD/g)?.length ?? 0;
  if (replacements > 0 && replacements > text.length / 100) return "not valid UTF-8 text";
  if (text.trim() === "") return "empty";
  return undefined;
}

/** Decodes bytes as UTF-8 text, or explains why not. */
export function decodeText(bytes: Uint8Array): { text: string } | { reason: string } {
  if (bytes.includes(0)) return { reason: "binary content (NUL bytes)" };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { reason: "not valid UTF-8 text" };
  }
  const reason = rejectReason(text);
  return reason ? { reason } : { text };
}

/** Reads every text document under the given files and directories (recursively, sorted). */
export function readDocuments(paths: string[]): { documents: InputDocument[]; warnings: string[] } {
  const documents: InputDocument[] = [];
  const warnings: string[] = [];
  for (const given of paths) {
    const root = resolve(given);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(root);
    } catch {
      warnings.push(`${given}: no such file or directory`);
      continue;
    }
    const files = stat.isDirectory()
      ? walk(root).map((f) => ({ file: f, title: relative(root, f) }))
      : [{ file: root, title: basename(root) }];
    for (const { file, title } of files) {
      if (stat.isDirectory() && !TEXT_EXTENSIONS.has(extname(file).toLowerCase())) continue;
      const decoded = decodeText(readFileSync(file));
      if ("reason" in decoded) warnings.push(`${title}: skipped, ${decoded.reason}`);
      else documents.push({ title, text: decoded.text });
    }
  }
  return { documents, warnings };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
