/**
 * Moves one folder to another name by renames only, merging into what is already there. Every step is
 * one rename, so a crash leaves each entry either at its old place or its new one, never half copied,
 * and running the move again finishes it. Nothing is overwritten: an entry whose name is taken in the
 * target (a file in both places) keeps its bytes under a free name beside it (`notes.migrated.md`).
 */
import { lstatSync, readdirSync, renameSync, rmdirSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";

export interface MergeReport {
  /** Entries kept under another name because theirs was taken, as paths relative to the target. */
  renamed: { from: string; to: string }[];
}

/** Moves `source` to `target` (merging directories); `source` is gone afterwards. */
export function moveMerging(source: string, target: string, report: MergeReport = { renamed: [] }, rel = "") {
  const from = lstatSync(source, { throwIfNoEntry: false });
  if (!from) return report;
  const to = lstatSync(target, { throwIfNoEntry: false });
  if (!to) {
    renameSync(source, target);
    return report;
  }
  // Symlinks are moved as links, never followed (a link is not a folder to merge into).
  if (from.isDirectory() && to.isDirectory()) {
    for (const name of readdirSync(source))
      moveMerging(join(source, name), join(target, name), report, rel ? `${rel}/${name}` : name);
    rmdirSync(source);
    return report;
  }
  const free = freeName(target);
  renameSync(source, free);
  report.renamed.push({ from: rel, to: join(dirname(rel), basename(free)) });
  return report;
}

/** `notes.md` → `notes.migrated.md`, then `notes.migrated-2.md`, ... (the first name not taken). */
function freeName(path: string): string {
  const ext = extname(path);
  const stem = path.slice(0, path.length - ext.length);
  for (let n = 1; ; n++) {
    const candidate = `${stem}.migrated${n === 1 ? "" : `-${n}`}${ext}`;
    if (!lstatSync(candidate, { throwIfNoEntry: false })) return candidate;
  }
}
