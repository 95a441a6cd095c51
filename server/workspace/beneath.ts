/**
 * File operations confined to a folder that another, less trusted process may change at any moment (a
 * user's sandbox jail owns the workspace folder and runs in the background). Checking each path
 * segment with lstat and then using the path is a race: the jail can swap a checked folder for a
 * symlink in between, and the server (root) then writes, reads or deletes outside. Here every path is
 * resolved by the kernel, relative to a descriptor of the anchor folder, with Linux `openat2(2)` and
 * `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`: no symlink anywhere on the way (the
 * last component included), no `..` above the anchor, no absolute path, no /proc magic link. Each use
 * then goes through the descriptor it opened (read, write, fstat) or the descriptor of its parent
 * (mkdirat, renameat, unlinkat), so nothing is looked up twice.
 *
 * Files and folders created here are handed to the owner of the anchor when the server is root and that
 * owner is someone else, so the sandbox (uid 65534) can edit what the user just uploaded.
 *
 * Reads take only regular files with a single name, never open anything else for real, and read at
 * most a cap (regular-file.ts says why). `openDir` holds one folder's descriptor, so a whole request
 * resolves beneath the folder it opened once, whatever the sandbox renames meanwhile.
 *
 * Where openat2 is not available (macOS, Linux before 5.6, a seccomp filter refusing it) the same
 * operations run on plain paths, as the callers' own lstat checks always did, and the log says so once.
 */
import {
  appendFileSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { constants as osConstants } from "node:os";
import { dirname, join } from "node:path";
import { AT_REMOVEDIR, check, cstr, fail, type Libc, load, O_PATH, openat2Raw, RESOLVE } from "./openat2.ts";
import {
  checkRegular,
  fileRefusal,
  modeOf,
  readCapped,
  readLink,
  reopenRegular,
  resolveFollowing,
  whereInside,
} from "./regular-file.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
let forcedFallback = false;

/** Tests and the bench only: run the plain-path code even where openat2 works (the old behaviour). */
export function forceBeneathFallback(on: boolean): void {
  forcedFallback = on;
}

/** Whether operations here are resolved by openat2 (else plain paths, checked by the caller). */
export function beneathAvailable(): boolean {
  return !forcedFallback && load() !== null;
}

const parts = (relative: string) => relative.split("/").filter((p) => p !== "" && p !== ".");

/** Whether an error means "a symlink, a magic link or `..` was on the way" (openat2's refusals). */
export function isEscape(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === "ELOOP" || code === "EXDEV";
}

/**
 * An anchor folder: every relative path given to its methods resolves beneath it. The anchor's own
 * path is trusted (the server made it and the jail cannot rename it); everything under it is not.
 */
export class Beneath {
  /** `held`: a descriptor of the anchor this instance owns (openDir), used instead of its path. */
  constructor(
    readonly anchor: string,
    private held?: number,
  ) {}

  private with<T>(use: (c: Libc, root: number) => T): T {
    const c = load() as Libc;
    if (this.held !== undefined) return use(c, this.held);
    const root = openSync(this.anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      return use(c, root);
    } finally {
      closeSync(root);
    }
  }

  /**
   * The folder `relative` names beneath the anchor, opened once (no symlink on the way, itself
   * included): every method of the answer resolves beneath that descriptor until `close()`.
   */
  openDir(relative: string): Beneath {
    const anchor = join(this.anchor, relative);
    if (!beneathAvailable()) {
      const stat = lstatSync(anchor);
      if (stat.isSymbolicLink()) throw fileRefusal("ELOOP", `ELOOP: '${relative}' is a symbolic link`);
      if (!stat.isDirectory()) throw fileRefusal("ENOTDIR", `ENOTDIR: '${relative}'`);
      return new Beneath(anchor);
    }
    return this.with((c, root) => new Beneath(anchor, this.open(c, root, relative, O_RDONLY | O_DIRECTORY)));
  }

  /** Lets go of the descriptor `openDir` opened (nothing for an anchor named by path). */
  close(): void {
    if (this.held !== undefined) closeSync(this.held);
    this.held = undefined;
  }

  private open(c: Libc, dirfd: number, relative: string, flags: number, mode = 0): number {
    return check(c, openat2Raw(c, dirfd, relative || ".", flags, mode, RESOLVE), "openat2", relative);
  }

  /** Owner to hand new entries to: the anchor's, when the server is root and the anchor is not its own. */
  private handTo(root: number): { uid: number; gid: number } | undefined {
    if (process.getuid?.() !== 0) return undefined;
    const stat = fstatSync(root);
    return stat.uid === 0 && stat.gid === 0 ? undefined : { uid: stat.uid, gid: stat.gid };
  }

  /** The parent folder of `relative` opened (created as needed, handed over), and the last name. */
  private parent(c: Libc, root: number, relative: string, create: boolean, whole = false) {
    const names = parts(relative);
    const name = whole ? "." : names.pop();
    if (!name) throw Object.assign(new Error("EINVAL: no file name"), { code: "EINVAL" });
    const owner = create ? this.handTo(root) : undefined;
    let dir = this.open(c, root, ".", O_PATH | O_DIRECTORY);
    try {
      for (const part of names) {
        if (create) {
          const made = c.mkdirat(dir, cstr(part), 0o777);
          if (made < 0 && c.errno() !== osConstants.errno.EEXIST) fail(c, "mkdirat", part);
          if (made === 0 && owner) {
            const fd = this.open(c, dir, part, O_RDONLY | O_DIRECTORY);
            try {
              fchownSync(fd, owner.uid, owner.gid);
            } finally {
              closeSync(fd);
            }
          }
        }
        const next = this.open(c, dir, part, O_PATH | O_DIRECTORY);
        closeSync(dir);
        dir = next;
      }
      return { dir, name, owner };
    } catch (error) {
      closeSync(dir);
      throw error;
    }
  }

  /**
   * The file's bytes, or undefined when it does not exist: a regular file with one name and at most
   * `max` bytes, else an error (`ENOTREG`, `EISDIR`, `EMLINK`, `EFBIG`; see regular-file.ts). With
   * `followInside`, symlinks that stay beneath the anchor are followed (see withFile).
   */
  readFile(relative: string, max = Number.MAX_SAFE_INTEGER, followInside?: string[]): Buffer | undefined {
    try {
      const read = (fd: number, stat: Stats) => readCapped(fd, stat.size, relative, max);
      return this.withFile(relative, max, read, followInside);
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /**
   * Where `relative` leads when symlinks that stay beneath the anchor are followed (as withFile does):
   * the path, relative to the anchor, of what it names; when that does not exist yet, of its folder
   * plus its name; `relative` itself when neither exists. A write there goes through a link inside to
   * its target (as a plain open would) instead of replacing the link.
   */
  resolveInside(relative: string, followInside: string[]): string {
    if (!beneathAvailable()) return relative;
    return this.with((c, root) => whereInside(c, root, relative, followInside));
  }

  /**
   * Runs `use` on the regular file `relative` names, opened for reading (see readFile for what is
   * refused). With `followInside`, symlinks on the way are followed while they stay beneath the anchor
   * (relative ones, or absolute ones starting with one of those paths: the anchor as links spell it).
   */
  withFile<T>(
    relative: string,
    max: number,
    use: (fd: number, stat: Stats) => T,
    followInside?: string[],
  ): T {
    if (!beneathAvailable()) {
      const path = join(this.anchor, relative);
      const fd = openSync(path, O_RDONLY | O_NONBLOCK | (followInside ? 0 : O_NOFOLLOW));
      try {
        const stat = fstatSync(fd);
        checkRegular(stat, relative, max);
        return use(fd, stat);
      } finally {
        closeSync(fd);
      }
    }
    return this.with((c, root) => {
      const pathFd = followInside
        ? resolveFollowing(c, root, relative, followInside)
        : this.open(c, root, relative, O_PATH | O_NOFOLLOW);
      const { fd, stat } = reopenRegular(pathFd, relative, max);
      try {
        return use(fd, stat);
      } finally {
        closeSync(fd);
      }
    });
  }

  /** lstat, never following: undefined when missing. Through openat2 a symlink on the way throws. */
  stat(relative: string): Stats | undefined {
    if (!beneathAvailable()) return lstatSync(join(this.anchor, relative), { throwIfNoEntry: false });
    return this.with((c, root) => {
      let fd: number;
      try {
        fd = this.open(c, root, relative, O_PATH | O_NOFOLLOW);
      } catch (error) {
        if ((error as { code?: string }).code === "ENOENT") return undefined;
        throw error;
      }
      try {
        return fstatSync(fd);
      } finally {
        closeSync(fd);
      }
    });
  }

  /**
   * The target of the symlink `relative` names (its folders resolved beneath the anchor, none of them a
   * link); EINVAL when the name is not a symlink (any more).
   */
  readLink(relative: string): string {
    if (!beneathAvailable()) return readlinkSync(join(this.anchor, relative));
    return this.with((c, root) => {
      const fd = this.open(c, root, relative, O_PATH | O_NOFOLLOW);
      try {
        if (!fstatSync(fd).isSymbolicLink())
          throw fileRefusal("EINVAL", `EINVAL: '${relative}' is not a link`);
        return readLink(c, fd, relative);
      } finally {
        closeSync(fd);
      }
    });
  }

  /**
   * Creates or replaces a file atomically (temp file + rename), creating its folders. A file it
   * replaces keeps its permission bits (an edited script stays executable); whatever else was under
   * the name (a link, a pipe) is replaced, never written through.
   */
  writeFile(relative: string, data: string | Uint8Array): void {
    if (!beneathAvailable()) {
      const abs = join(this.anchor, relative);
      mkdirSync(dirname(abs), { recursive: true });
      const temp = `${abs}.${process.pid}.${Date.now()}.tmp`;
      writeFileSync(temp, data);
      renameSync(temp, abs);
      return;
    }
    this.with((c, root) => {
      const { dir, name, owner } = this.parent(c, root, relative, true);
      try {
        const temp = `.${name.slice(0, 200)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
        const fd = this.open(c, dir, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
        try {
          try {
            writeAll(fd, data);
            if (owner) fchownSync(fd, owner.uid, owner.gid);
            const mode = modeOf(c, dir, name);
            if (mode !== undefined) fchmodSync(fd, mode);
          } finally {
            closeSync(fd);
          }
          check(c, c.renameat(dir, cstr(temp), dir, cstr(name)), "renameat", relative);
        } catch (error) {
          c.unlinkat(dir, cstr(temp), 0);
          throw error;
        }
      } finally {
        closeSync(dir);
      }
    });
  }

  /** Creates a file that must not exist yet (EEXIST otherwise); its folders must exist. */
  createFile(relative: string, data: string | Uint8Array): void {
    if (!beneathAvailable()) {
      writeFileSync(join(this.anchor, relative), data, { flag: "wx" });
      return;
    }
    this.with((c, root) => {
      const owner = this.handTo(root);
      const fd = this.open(c, root, relative, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
      try {
        writeAll(fd, data);
        if (owner) fchownSync(fd, owner.uid, owner.gid);
      } finally {
        closeSync(fd);
      }
    });
  }

  /** Appends to a file, creating it (and its folders) when missing. */
  appendFile(relative: string, data: string | Uint8Array): void {
    if (!beneathAvailable()) {
      const abs = join(this.anchor, relative);
      mkdirSync(dirname(abs), { recursive: true });
      appendFileSync(abs, data);
      return;
    }
    this.with((c, root) => {
      const { dir, name, owner } = this.parent(c, root, relative, true);
      try {
        const existed = (() => {
          try {
            closeSync(this.open(c, dir, name, O_PATH | O_NOFOLLOW));
            return true;
          } catch {
            return false;
          }
        })();
        const fd = this.open(c, dir, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o666);
        try {
          // Appending writes through the inode: never into a file that also has a name elsewhere.
          checkRegular(fstatSync(fd), relative, Number.MAX_SAFE_INTEGER);
          writeAll(fd, data);
          if (owner && !existed) fchownSync(fd, owner.uid, owner.gid);
        } finally {
          closeSync(fd);
        }
      } finally {
        closeSync(dir);
      }
    });
  }

  /** Creates a folder and its parents (handed over like files). */
  mkdir(relative: string): void {
    if (!beneathAvailable()) {
      mkdirSync(join(this.anchor, relative), { recursive: true });
      return;
    }
    if (parts(relative).length === 0) return;
    this.with((c, root) => closeSync(this.parent(c, root, relative, true, true).dir));
  }

  /** Removes a file (`directory` false) or an empty folder (true). */
  remove(relative: string, directory: boolean): void {
    if (!beneathAvailable()) {
      const abs = join(this.anchor, relative);
      if (directory) rmdirSync(abs);
      else unlinkSync(abs);
      return;
    }
    this.with((c, root) => {
      const { dir, name } = this.parent(c, root, relative, false);
      try {
        check(c, c.unlinkat(dir, cstr(name), directory ? AT_REMOVEDIR : 0), "unlinkat", relative);
      } finally {
        closeSync(dir);
      }
    });
  }

  /** One folder's entries (name and lstat), read through a descriptor of that folder. */
  entries(relative: string): { name: string; stat: Stats }[] {
    const found: { name: string; stat: Stats }[] = [];
    this.walk(relative, (_rel, name, stat) => {
      found.push({ name, stat });
      return false;
    });
    return found;
  }

  /**
   * A folder's entries with their lstat, read through a descriptor of that folder (so a swap of the
   * folder cannot list another one). `visit` returns true to descend into a folder entry.
   */
  walk(relative: string, visit: (rel: string, name: string, stat: Stats) => boolean | "stop"): boolean {
    if (!beneathAvailable()) return walkPaths(join(this.anchor, relative), "", visit);
    return this.with((c, root) => {
      const go = (dirfd: number, rel: string): boolean => {
        const here = `/proc/self/fd/${dirfd}`;
        for (const name of readdirSync(here).sort()) {
          const stat = lstatSync(`${here}/${name}`);
          const next = visit(rel, name, stat);
          if (next === "stop") return false;
          if (next && stat.isDirectory()) {
            const fd = this.open(c, dirfd, name, O_RDONLY | O_DIRECTORY);
            try {
              if (!go(fd, `${rel}${name}/`)) return false;
            } finally {
              closeSync(fd);
            }
          }
        }
        return true;
      };
      const start = this.open(c, root, relative, O_RDONLY | O_DIRECTORY);
      try {
        return go(start, "");
      } finally {
        closeSync(start);
      }
    });
  }
}

function walkPaths(
  dir: string,
  rel: string,
  visit: (rel: string, name: string, stat: Stats) => boolean | "stop",
) {
  for (const name of readdirSync(dir).sort()) {
    const stat = lstatSync(join(dir, name));
    const next = visit(rel, name, stat);
    if (next === "stop") return false;
    if (next && stat.isDirectory() && !walkPaths(join(dir, name), `${rel}${name}/`, visit)) return false;
  }
  return true;
}

function writeAll(fd: number, data: string | Uint8Array) {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
}
