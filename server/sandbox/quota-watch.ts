/**
 * The per-owner workspace quota (policy storage.workspace_quota_bytes, storage.workspace_max_files) for
 * what sandboxes write: a user's long-lived sandbox and local mode's per-command shell write the owner's
 * workspace folder directly, where the Files API's check (turns/services/quota.ts) never sees them, and
 * RLIMIT_FSIZE only bounds one file. A watchdog (docs/security.md says why not a quota mount): while a
 * sandbox runs, its owner's bytes (the workspace folder, attachments and artifacts) and entries are
 * measured, and past the quota the sandbox is stopped with a message saying so. A sandbox started over the
 * quota may run, so that its user can delete files, but not grow: it is stopped again as soon as it
 * stores more than the least it was measured at.
 *
 * Cheap between measurements: every tick reads the filesystem's used blocks and inodes (statfs), and a
 * workspace is walked only when the filesystem grew by more than that owner's headroom since its last
 * walk (nobody can add more to the owner's folder than the whole filesystem grew), and at the latest every
 * `fullCheckMs` (files deleted elsewhere at the same time, sparse files). So what a sandbox writes past
 * its quota is at most what it writes in one tick plus one walk: the slack docs/security.md states.
 *
 * Files the sandbox deleted (or made with `O_TMPFILE`) but still holds open or mapped take the same disk
 * without a name in any folder: the sandbox's processes are asked for them too (held-files.ts).
 *
 * The walk holds a descriptor of each folder and looks every name up inside it without following a
 * symlink (`/proc/self/fd/N/name`, O_NOFOLLOW), so a folder the sandbox swaps for a link mid-walk is not
 * followed; entries that vanish are skipped. It yields to the event loop every few thousand entries.
 */
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  type Stats,
  statfsSync,
  statSync,
} from "node:fs";
import { basename } from "node:path";
import { ownerFoldersByName } from "../workspace/owner-folders.ts";
import { heldWithoutName } from "./held-files.ts";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

export interface WorkspaceQuota {
  /** The data dir whose workspaces these are (the owner's attachments and artifacts count too). */
  dataDir: string;
  limitBytes: number;
  /** Files, folders and links of the owner's folders together (inodes the host must give them). */
  maxEntries: number;
}

export interface QuotaWatchOptions {
  /** How often the filesystem's usage is read (default 200 ms). */
  tickMs?: number;
  /** The longest time between two walks of a watched workspace (default 30 s). */
  fullCheckMs?: number;
}

/** The error a sandbox stopped for its quota rejects its command with. */
export class QuotaExceeded extends Error {
  override name = "QuotaExceeded";
}

interface Watched {
  workspaceDir: string;
  stop: (error: QuotaExceeded) => void;
  /** The sandbox's processes now (their nameless files count: held-files.ts). */
  processes: () => number[];
  /** Bytes the owner may store: the quota, or the least measured since start when it started over. */
  allowedBytes?: number;
  allowedEntries?: number;
  lastBytes: number;
  lastEntries: number;
  /** The filesystem's used bytes and inodes when the last walk began. */
  fsAtWalk: FilesystemUse;
  lastWalk: number;
  walking: boolean;
  done: boolean;
}

const MIB = 1024 * 1024;
const YIELD_EVERY = 2000;

const size = (bytes: number) =>
  bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`;

/** Bytes of regular files and number of entries under `dir`, never following a symlink. */
export async function measureFolder(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  let sinceYield = 0;
  const visit = async (fd: number): Promise<void> => {
    let names: string[];
    try {
      names = readdirSync(`/proc/self/fd/${fd}`);
    } catch {
      return;
    }
    for (const name of names) {
      const path = `/proc/self/fd/${fd}/${name}`;
      let stat: Stats | undefined;
      try {
        stat = lstatSync(path, { throwIfNoEntry: false });
      } catch {}
      if (!stat) continue;
      entries++;
      if (stat.isDirectory()) {
        let child: number;
        try {
          child = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        } catch {
          continue; // gone, or swapped for a link since its lstat
        }
        try {
          await visit(child);
        } finally {
          closeSync(child);
        }
      } else if (!stat.isSymbolicLink()) bytes += stat.size;
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };
  let root: number;
  try {
    root = openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return { bytes, entries };
  }
  try {
    await visit(root);
  } finally {
    closeSync(root);
  }
  return { bytes, entries };
}

interface FilesystemUse {
  bytes: number;
  inodes: number;
}

/** The used bytes and inodes of the filesystem holding `dir` (0 when it cannot be read). */
function filesystemUsed(dir: string): FilesystemUse {
  try {
    const s = statfsSync(dir);
    return { bytes: (s.blocks - s.bfree) * s.bsize, inodes: s.files - s.ffree };
  } catch {
    return { bytes: 0, inodes: 0 };
  }
}

export class QuotaWatch {
  private readonly watched = new Set<Watched>();
  /** The last walk of each workspace folder, to start the next watch of it from. */
  private readonly recent = new Map<
    string,
    { bytes: number; entries: number; fs: FilesystemUse; at: number }
  >();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tickMs: number;
  private readonly fullCheckMs: number;

  constructor(
    readonly quota: WorkspaceQuota,
    options: QuotaWatchOptions = {},
  ) {
    this.tickMs = options.tickMs ?? 200;
    this.fullCheckMs = options.fullCheckMs ?? 30_000;
  }

  /**
   * What the owner of `workspaceDir` stores: the workspace folder, attachments and artifacts, and the
   * files `processes` (a running sandbox's) hold there without a name.
   */
  async usage(workspaceDir: string, processes: number[] = []): Promise<{ bytes: number; entries: number }> {
    const folders = ownerFoldersByName(this.quota.dataDir, basename(workspaceDir));
    const parts = await Promise.all(
      [workspaceDir, folders.attachments, folders.artifacts].map((dir) => measureFolder(dir)),
    );
    const named = parts.reduce((a, b) => ({ bytes: a.bytes + b.bytes, entries: a.entries + b.entries }));
    if (processes.length === 0) return named;
    let device: number;
    try {
      device = statSync(workspaceDir).dev;
    } catch {
      return named;
    }
    const held = heldWithoutName(processes, device);
    return { bytes: named.bytes + held.bytes, entries: named.entries + held.files };
  }

  /**
   * Watches the workspace folder of a running sandbox; `stop` is called once, when it goes over.
   * `processes` lists the sandbox's processes at the moment it is called. Returns the function that
   * ends the watch (when the sandbox exits).
   */
  watch(workspaceDir: string, stop: (error: QuotaExceeded) => void, processes: () => number[]): () => void {
    const entry: Watched = {
      workspaceDir,
      stop,
      processes,
      lastBytes: 0,
      lastEntries: 0,
      fsAtWalk: { bytes: 0, inodes: 0 },
      lastWalk: 0,
      walking: false,
      done: false,
    };
    this.watched.add(entry);
    // A walk of this workspace a moment ago (local mode's shell starts a jail per command) stands in
    // for a new one: the filesystem's growth since then is what the first tick compares.
    const recent = this.recent.get(workspaceDir);
    const { limitBytes, maxEntries } = this.quota;
    const under = recent && recent.bytes <= limitBytes && recent.entries <= maxEntries;
    if (recent && under && Date.now() - recent.at < this.fullCheckMs) {
      Object.assign(entry, {
        lastBytes: recent.bytes,
        lastEntries: recent.entries,
        fsAtWalk: recent.fs,
        lastWalk: recent.at,
        allowedBytes: limitBytes,
        allowedEntries: maxEntries,
      });
    } else void this.walk(entry);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref?.();
    }
    return () => this.forget(entry);
  }

  /** Stops watching everything (the server is closing). */
  close(): void {
    for (const entry of this.watched) entry.done = true;
    this.watched.clear();
    this.recent.clear();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private forget(entry: Watched): void {
    entry.done = true;
    this.watched.delete(entry);
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tick(): void {
    const now = Date.now();
    const used = new Map<string, FilesystemUse>();
    for (const entry of this.watched) {
      if (entry.walking || entry.allowedBytes === undefined || entry.allowedEntries === undefined) continue;
      const fs = used.get(entry.workspaceDir) ?? filesystemUsed(entry.workspaceDir);
      used.set(entry.workspaceDir, fs);
      const bytes = entry.lastBytes + Math.max(0, fs.bytes - entry.fsAtWalk.bytes);
      const entries = entry.lastEntries + Math.max(0, fs.inodes - entry.fsAtWalk.inodes);
      if (
        bytes > entry.allowedBytes ||
        entries > entry.allowedEntries ||
        now - entry.lastWalk >= this.fullCheckMs
      )
        void this.walk(entry);
    }
  }

  private async walk(entry: Watched): Promise<void> {
    if (entry.walking || entry.done) return;
    entry.walking = true;
    try {
      entry.fsAtWalk = filesystemUsed(entry.workspaceDir);
      const { bytes, entries } = await this.usage(entry.workspaceDir, entry.processes());
      entry.lastWalk = Date.now();
      entry.lastBytes = bytes;
      entry.lastEntries = entries;
      this.recent.set(entry.workspaceDir, { bytes, entries, fs: entry.fsAtWalk, at: entry.lastWalk });
      const { limitBytes, maxEntries } = this.quota;
      // Over the quota, the owner may shrink, never grow back: the allowance follows the lowest figure.
      entry.allowedBytes = Math.max(limitBytes, Math.min(entry.allowedBytes ?? bytes, bytes));
      entry.allowedEntries = Math.max(maxEntries, Math.min(entry.allowedEntries ?? entries, entries));
      if (entry.done) return;
      if (bytes > entry.allowedBytes || entries > entry.allowedEntries) {
        this.forget(entry);
        entry.stop(new QuotaExceeded(this.message(bytes, entries)));
      }
    } finally {
      entry.walking = false;
    }
  }

  private message(bytes: number, entries: number): string {
    const { limitBytes, maxEntries } = this.quota;
    const over =
      entries > maxEntries && bytes <= limitBytes
        ? `holds ${entries} files and folders, more than its ${maxEntries} (policy storage.workspace_max_files)`
        : `holds ${size(bytes)}, more than its quota of ${size(limitBytes)} (policy storage.workspace_quota_bytes)`;
    return `The workspace ${over}. The sandbox was stopped and nothing more can be written; delete files to free space (while over, commands may run but the workspace must not grow).`;
  }
}
