/**
 * The interpreters' memory snapshot: pyodide loaded and the prelude run, then the interpreter's whole
 * memory saved, so that every interpreter starts by restoring it (a fraction of a second) instead of
 * loading pyodide from scratch (seconds of CPU).
 *
 * It is made by a sandbox subprocess in the same jail as every interpreter (`atrium sandbox
 * --make-snapshot`), before any user code runs in it, so it holds no user data and is the same for every
 * owner; what a snapshot freezes that must differ per interpreter (Python's `random` seed) is renewed
 * after each restore (prelude.py `_fresh`). It is cached in the data dir (`cache/`) under a key naming
 * what shapes its memory: the pyodide version, the prelude's hash and the load options (LOAD_SHAPE). A
 * change of any makes a new one; no policy key shapes it (the limits bound the process, not its memory).
 *
 * Written under a temporary name and renamed, then named with its SHA-256 by a manifest written the same
 * way. The pool opens the file once, read-only, and checks the bytes it reads through that descriptor
 * against the hash (a truncated or altered file is made again, never loaded); each interpreter inherits
 * the descriptor (isolation.ts SNAPSHOT_FD), so it reads exactly the bytes checked, and before each start
 * the file's size and mtime are compared with the ones checked. No path of the data dir is shown in the
 * jail, and the worker closes the descriptor before any code runs.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { type Confinement, watchStart } from "./confinement.ts";
import { PATCHES_VERSION } from "./emscripten-patches.ts";
import { LOAD_SHAPE } from "./load-shape.ts";
import prelude from "./prelude.py" with { type: "text" };

/** Bumped when what the worker does before making a snapshot changes in a way the inputs do not show. */
const FORMAT = 1;
/** pyodide's snapshot header starts with this magic number (little-endian u32). */
const SNAPSHOT_MAGIC = 1886286592;
/** Far above a real snapshot (about 32 MiB): the maker's output is not trusted to be bounded. */
const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024;
/** Files of other keys (or superseded ones) older than this are removed; younger ones may be in use. */
const STALE_MS = 10 * 60 * 1000;

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** The cache key: what shapes the snapshot's memory. */
export function snapshotKey(pyodideVersion: string): string {
  return sha256(
    JSON.stringify({
      format: FORMAT,
      pyodide: pyodideVersion,
      prelude: sha256(prelude),
      shape: LOAD_SHAPE,
      patches: sha256(PATCHES_VERSION),
    }),
  );
}

/** A snapshot file checked against its manifest, open read-only as `fd` (close() when done). */
export interface SnapshotFile {
  path: string;
  fd: number;
  sha256: string;
  size: number;
  mtimeMs: number;
}

interface Manifest {
  key: string;
  file: string;
  sha256: string;
  size: number;
}

function writeAtomically(dir: string, name: string, bytes: Uint8Array | string): void {
  const temp = join(dir, `.${name}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
  try {
    writeFileSync(temp, bytes, { mode: 0o644 });
    chmodSync(temp, 0o644);
    renameSync(temp, join(dir, name));
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** The snapshots of one cache folder under one key. */
export class SnapshotCache {
  readonly key: string;
  private readonly manifestName: string;

  constructor(
    readonly dir: string,
    pyodideVersion: string,
  ) {
    this.key = snapshotKey(pyodideVersion);
    this.manifestName = `pyodide-${this.key.slice(0, 16)}.json`;
  }

  /** The cached snapshot when its manifest names it and its bytes match; else undefined. */
  find(): SnapshotFile | undefined {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(join(this.dir, this.manifestName), "utf8")) as Manifest;
    } catch {
      return undefined;
    }
    if (manifest.key !== this.key || !/^pyodide-[0-9a-f]{16}-[0-9a-f]{16}\.bin$/.test(String(manifest.file)))
      return undefined;
    return this.open(join(this.dir, manifest.file), manifest.sha256);
  }

  /** Stores a snapshot the maker wrote and names it in the manifest; returns the file. */
  store(bytes: Uint8Array): SnapshotFile {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // A folder left group- or world-writable would let others swap the file every interpreter loads.
    if ((statSync(this.dir).mode & 0o022) !== 0) chmodSync(this.dir, 0o700);
    const hash = sha256(bytes);
    // Named by its content too: a second server storing its own never overwrites the file this one checked.
    const file = `pyodide-${this.key.slice(0, 16)}-${hash.slice(0, 16)}.bin`;
    writeAtomically(this.dir, file, bytes);
    const manifest: Manifest = { key: this.key, file, sha256: hash, size: bytes.byteLength };
    writeAtomically(this.dir, this.manifestName, JSON.stringify(manifest));
    const stored = this.open(join(this.dir, file), hash);
    if (!stored) throw new Error("the snapshot just written does not read back");
    return stored;
  }

  /** False when the open file is no longer what was checked (written to, truncated). */
  unchanged(file: SnapshotFile): boolean {
    try {
      const now = fstatSync(file.fd);
      return now.size === file.size && now.mtimeMs === file.mtimeMs;
    } catch {
      return false;
    }
  }

  /** Opens `path` read-only and checks what the descriptor reads against `hash`. */
  private open(path: string, hash: string): SnapshotFile | undefined {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return undefined;
    }
    try {
      const { size, mtimeMs } = fstatSync(fd);
      const bytes = new Uint8Array(size);
      for (let at = 0; at < size; ) {
        const n = readSync(fd, bytes, at, size - at, at);
        if (n === 0) throw new Error("short read");
        at += n;
      }
      if (sha256(bytes) !== hash) throw new Error("hash mismatch");
      return { path, fd, sha256: hash, size, mtimeMs };
    } catch {
      closeSync(fd);
      return undefined;
    }
  }

  /** Removes snapshots and manifests other than `keep` once they are old enough to be unused. */
  prune(keep: SnapshotFile): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir).filter((n) =>
        /^pyodide-[0-9a-f]{16}(-[0-9a-f]{16}\.bin|\.json)$/.test(n),
      );
    } catch {}
    const kept = new Set([keep.path, join(this.dir, this.manifestName)]);
    for (const name of names) {
      const path = join(this.dir, name);
      if (kept.has(path)) continue;
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
      } catch {}
    }
  }
}

/** Checks what the maker wrote: a pyodide snapshot header and a plausible size. */
export function checkSnapshotBytes(bytes: Uint8Array): void {
  if (bytes.byteLength < 1024 || bytes.byteLength % 4 !== 0) throw new Error("the snapshot is truncated");
  const magic = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  if (magic !== SNAPSHOT_MAGIC) throw new Error("the maker did not write a pyodide snapshot");
}

export interface MakeOptions {
  /** The maker's start deadline, as an interpreter's (CPU time, or no progress for as long). */
  startTimeoutMs: number;
  confinement?: Confinement;
  /** Aborted when the pool closes: the maker is killed then, not left to finish for nobody. */
  signal?: AbortSignal;
  /** Told the maker's process id once it is spawned (the pool shows it to tests). */
  spawned?: (pid: number) => void;
}

/**
 * Runs `command` (the jail's sandbox command with `--make-snapshot`) and returns the snapshot it wrote to
 * stdout. Rejects when it fails, passes its deadline or writes something that is no snapshot.
 */
export async function makeSnapshot(command: string[], options: MakeOptions): Promise<Uint8Array> {
  const proc: Subprocess<"ignore", "pipe", "ignore"> = Bun.spawn(command, {
    env: {},
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  options.spawned?.(proc.pid);
  options.confinement?.watch(proc.pid, () => proc.kill("SIGKILL"));
  let stopped: string | undefined;
  const stop = (why: string) => {
    stopped = why;
    proc.kill("SIGKILL");
  };
  const watch = watchStart(proc.pid, options.startTimeoutMs, stop);
  const shutDown = () => stop("the sandbox shut down");
  if (options.signal?.aborted) shutDown();
  options.signal?.addEventListener("abort", shutDown, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_SNAPSHOT_BYTES) {
        proc.kill("SIGKILL");
        throw new Error("the snapshot maker wrote more than a snapshot can be");
      }
      chunks.push(chunk);
    }
    const code = await proc.exited;
    const memory = options.confinement?.exited(proc.pid);
    if (stopped) throw new Error(`the snapshot maker was stopped: ${stopped}`);
    if (code !== 0) throw new Error(`the snapshot maker exited with ${memory ? "its memory bound" : code}`);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    checkSnapshotBytes(bytes);
    return bytes;
  } finally {
    clearInterval(watch);
    options.signal?.removeEventListener("abort", shutDown);
    proc.kill("SIGKILL");
  }
}

/** What a pool logs about its snapshot (a subset of server/log.ts's Logger). */
export interface SnapshotLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * A pool's snapshot: found in the cache or made at the first need (the first warm-up or turn), then
 * handed to each interpreter start while its file is unchanged. When it cannot be had, interpreters load
 * pyodide from scratch, as they would without one.
 */
export class PoolSnapshot {
  private file: SnapshotFile | undefined;
  private pending: Promise<void> | undefined;
  private givenUp = false;

  constructor(
    private readonly cache: SnapshotCache,
    private readonly make: () => Promise<Uint8Array>,
    private readonly log?: SnapshotLog,
  ) {}

  /** True once the snapshot is known (found, made, or given up on): starts need not wait. */
  get settled(): boolean {
    return this.givenUp || this.file !== undefined;
  }

  /** Settles when the snapshot is known; looks for it (or makes it) at the first call. */
  ready(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.pending ??= this.obtain().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /**
   * True when starts may go ahead now: the snapshot is known and its file is still the one checked. A
   * file changed since is let go and looked for (or made) again: false until that settles.
   */
  check(): boolean {
    if (this.file && !this.cache.unchanged(this.file)) {
      this.log?.warn("the interpreters' snapshot changed on disk; checking it again", {
        path: this.file.path,
      });
      this.drop();
      void this.ready();
    }
    return this.settled;
  }

  /** The descriptor an interpreter starts from now (after check()), or undefined: none. */
  current(): number | undefined {
    return this.check() ? this.file?.fd : undefined;
  }

  /** An interpreter given the snapshot loaded from scratch instead (pyodide refused it): stop using it. */
  refused(): void {
    if (!this.file) return;
    this.log?.warn("an interpreter could not start from the snapshot; starting from scratch from now on", {
      path: this.file.path,
    });
    this.drop();
    this.givenUp = true;
  }

  /** Lets go of the file (the pool closes). */
  close(): void {
    this.drop();
    this.givenUp = true;
  }

  private drop(): void {
    const file = this.file;
    this.file = undefined;
    // Every interpreter started got its own copy of the descriptor as it was spawned.
    try {
      if (file) closeSync(file.fd);
    } catch {}
  }

  private async obtain(): Promise<void> {
    const found = this.cache.find();
    if (found) {
      this.file = found;
      return;
    }
    const started = performance.now();
    try {
      this.file = this.cache.store(await this.make());
      this.cache.prune(this.file);
      this.log?.info("made the interpreters' snapshot", {
        path: this.file.path,
        bytes: this.file.size,
        ms: Math.round(performance.now() - started),
      });
    } catch (error) {
      // Interpreters then load pyodide from scratch: slower, never wrong. (After close(), nothing to say.)
      if (this.givenUp) return;
      this.givenUp = true;
      this.log?.warn("could not make the interpreters' snapshot; interpreters load pyodide from scratch", {
        error: (error as Error).message,
      });
    }
  }
}
