/**
 * The per-owner storage quota of the turns family (`storage.workspace_quota_bytes`): an owner's
 * workspace folder (turns' files, the agent workspace, whatever the shell left there), attachments and
 * artifacts together. Every write through the Files API, the sandbox's host tools (write_file,
 * create_artifact) and attachment uploads asks first; past the quota the write is refused with 413
 * `workspace_quota_exceeded` (in the sandbox: a Python exception with the message). What a shell or a
 * user's sandbox writes directly is held to the same quota by server/sandbox/quota-watch.ts.
 *
 * Usage is measured at each write (a walk of the owner's workspace and two sums in the database), not
 * cached: the chat family's tools write into the same workspace, so a cached figure would drift. The
 * database's share is read first (`reserver`, asynchronous); the walk, the check and the write then run
 * without yielding, so nothing else writes the owner's folder between them.
 */
import { basename, dirname } from "node:path";
import { AppError } from "../../http/errors.ts";
import { Beneath } from "../../workspace/beneath.ts";
import { ownerFolders } from "../../workspace/owner-folders.ts";
import type { TurnAssetStore } from "../stores/assets.ts";

/**
 * Bytes of the regular files under `root`, symlinks not followed. Walked through descriptors beneath
 * the workspace folder: the sandbox may swap a folder for a symlink to `/` mid-walk.
 */
export function bytesUnder(root: string): number {
  let total = 0;
  try {
    new Beneath(dirname(root)).walk(basename(root), (_rel, _name, stat) => {
      if (stat.isSymbolicLink()) return false;
      if (!stat.isDirectory()) total += stat.size;
      return true;
    });
  } catch {}
  return total;
}

export interface TurnQuotaDeps {
  dataDir: string;
  /** The bytes of the owner's attachments and artifacts. */
  assets: Pick<TurnAssetStore, "bytesUsed">;
  limitBytes: number;
}

export class TurnQuota {
  readonly limitBytes: number;

  constructor(private readonly deps: TurnQuotaDeps) {
    this.limitBytes = deps.limitBytes;
  }

  /**
   * Bytes the owner stores now: the whole workspace folder (what the chat agent's shell and the user's
   * sandbox write counts too), attachments, artifacts not discarded.
   */
  async used(owner: string): Promise<number> {
    const stored = await this.deps.assets.bytesUsed(owner);
    return bytesUnder(ownerFolders(this.deps.dataDir, owner).workspace) + stored;
  }

  /** Throws 413 `workspace_quota_exceeded` unless `adding` bytes (replacing `replacing`) fit. */
  async check(owner: string, adding: number, replacing = 0): Promise<void> {
    (await this.reserver(owner))(adding, replacing);
  }

  /**
   * The check with the database's share read now: a synchronous function that walks the workspace and
   * throws when `adding` bytes (replacing `replacing`) do not fit.
   */
  async reserver(owner: string): Promise<(adding: number, replacing: number) => void> {
    const stored = await this.deps.assets.bytesUsed(owner);
    return (adding, replacing) => {
      const used = bytesUnder(ownerFolders(this.deps.dataDir, owner).workspace) + stored;
      if (used - replacing + adding <= this.limitBytes) return;
      throw new AppError(
        "too_large",
        `The workspace quota of ${this.limitBytes} bytes would be exceeded (${used} bytes in use, this write adds ${adding - replacing})`,
        { code: "workspace_quota_exceeded" },
      );
    };
  }
}
