/**
 * The per-owner storage quota of the turns family (`storage.workspace_quota_bytes`): an owner's
 * workspace files, attachments and artifacts together. Every write through the Files API, the sandbox's
 * host tools (write_file, create_artifact) and attachment uploads asks first; past the quota the write is
 * refused with 413 `workspace_quota_exceeded` (in the sandbox: a Python exception with the message).
 *
 * Usage is measured at each write (a walk of the owner's files and two sums in SQLite), not cached: the
 * chat family's tools write into the same workspace, so a cached figure would drift.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../http/errors.ts";

/** Bytes of the regular files under `root`, symlinks not followed. */
export function bytesUnder(root: string): number {
  let total = 0;
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const stat = lstatSync(join(dir, name), { throwIfNoEntry: false });
      if (!stat || stat.isSymbolicLink()) continue;
      if (stat.isDirectory()) walk(join(dir, name));
      else total += stat.size;
    }
  };
  walk(root);
  return total;
}

export class TurnQuota {
  /** `filesRoot(owner)` is the owner's workspace files folder; `stored(owner)`, the bytes of its assets. */
  constructor(
    private readonly filesRoot: (owner: string) => string,
    private readonly stored: (owner: string) => number,
    readonly limitBytes: number,
  ) {}

  /** Bytes the owner stores now: workspace files, attachments, artifacts not discarded. */
  used(owner: string): number {
    return bytesUnder(this.filesRoot(owner)) + this.stored(owner);
  }

  /** Throws 413 `workspace_quota_exceeded` unless `adding` bytes (replacing `replacing`) fit. */
  check(owner: string, adding: number, replacing = 0): void {
    const used = this.used(owner);
    if (used - replacing + adding <= this.limitBytes) return;
    throw new AppError(
      "too_large",
      `The workspace quota of ${this.limitBytes} bytes would be exceeded (${used} bytes in use, this write adds ${adding - replacing})`,
      { code: "workspace_quota_exceeded" },
    );
  }
}
