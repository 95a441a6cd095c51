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
import { AppError } from "../http/errors.ts";
import type { Store } from "../storage/store.ts";

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

export class OwnerQuota {
  constructor(
    private readonly store: Store,
    private readonly filesRoot: (owner: string) => string,
    readonly limitBytes: number,
  ) {}

  /** Bytes the owner stores now: workspace files, attachments, artifacts not discarded. */
  used(owner: string): number {
    const sum = (sql: string) => this.store.get<{ n: number | null }>(sql, [owner])?.n ?? 0;
    return (
      bytesUnder(this.filesRoot(owner)) +
      sum("SELECT sum(byte_size) AS n FROM turn_attachments WHERE owner_id = ?") +
      sum("SELECT sum(byte_size) AS n FROM turn_artifacts WHERE owner_id = ? AND state != 'discarded'")
    );
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
