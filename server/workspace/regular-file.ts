/**
 * Reading one file beneath a descriptor when the folder belongs to someone else (a sandbox, a model's
 * shell): what `Beneath.readFile` and `Beneath.withFile` are made of.
 *
 * - The name is resolved to an `O_PATH` descriptor first, which opens nothing: a device or a named pipe
 *   is never opened for real (no driver runs, no waiting writer is let through), and only a regular
 *   file is then reopened for reading, through that same descriptor (`/proc/self/fd`), non-blocking.
 * - A regular file with more than one link is refused. A hard link is a second name for a file kept
 *   elsewhere (another user's, the server's own `app.db-wal`, a root-owned host file on the same
 *   filesystem); nothing about the name tells it apart, and checking its owner does not help (in local
 *   mode the server's own files have the workspace's owner). Hard links inside a workspace are rare, so
 *   every second name is refused rather than guessed about.
 * - At most `max` bytes are read: the size is checked before any read (a 1 GiB sparse file is refused
 *   unread) and again while reading (a file growing meanwhile stops at the cap).
 * - `resolveFollowing` walks a path one name at a time, following a symlink only where its target stays
 *   beneath the anchor (relative targets, or absolute ones naming the anchor's own path), for the
 *   readers that follow links inside the workspace as the reference client does (the workspace `file` route, local
 *   mode's file tools); `whereInside` says where such a path leads, for a write to go there.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, type Stats } from "node:fs";
import { check, cstr, fail, type Libc, O_PATH, openat2Raw, RESOLVE } from "./openat2.ts";

const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW, O_NOCTTY, O_DIRECTORY } = constants;
/** Linux's own limit on symlinks followed in one lookup. */
const MAX_LINKS = 40;

export const fileRefusal = (code: string, message: string) => Object.assign(new Error(message), { code });

/** Throws unless `stat` is a regular file with a single name and at most `max` bytes. */
export function checkRegular(stat: Stats, what: string, max: number): void {
  if (stat.isSymbolicLink()) throw fileRefusal("ELOOP", `ELOOP: '${what}' is a symbolic link`);
  if (stat.isDirectory()) throw fileRefusal("EISDIR", `EISDIR: '${what}' is a folder`);
  if (!stat.isFile()) throw fileRefusal("ENOTREG", `not a regular file: '${what}'`);
  if (stat.nlink > 1) throw fileRefusal("EMLINK", `'${what}' has other names (hard links): not read`);
  if (stat.size > max) throw fileRefusal("EFBIG", `'${what}' is larger than ${max} bytes: not read`);
}

/**
 * A regular file's readable descriptor, reopened from an `O_PATH` descriptor of it (which it closes),
 * with its stat; throws for anything else (see checkRegular).
 */
export function reopenRegular(pathFd: number, what: string, max: number): { fd: number; stat: Stats } {
  try {
    const stat = fstatSync(pathFd);
    checkRegular(stat, what, max);
    return { fd: openSync(`/proc/self/fd/${pathFd}`, O_RDONLY | O_NONBLOCK | O_NOCTTY), stat };
  } finally {
    closeSync(pathFd);
  }
}

/** Up to `max` bytes of an open file (EFBIG when it holds more, as a file still growing may). */
export function readCapped(fd: number, size: number, what: string, max: number): Buffer {
  let bytes = Buffer.alloc(Math.min(size, max) + 1);
  let length = 0;
  for (;;) {
    if (length === bytes.length) {
      if (length > max) throw fileRefusal("EFBIG", `'${what}' is larger than ${max} bytes: not read`);
      const grown = Buffer.alloc(Math.min(bytes.length * 2, max + 1));
      bytes.copy(grown);
      bytes = grown;
    }
    const n = readSync(fd, bytes, length, bytes.length - length, null);
    if (n === 0) return bytes.subarray(0, length);
    length += n;
  }
}

const parts = (path: string) => path.split("/").filter((p) => p !== "" && p !== ".");

/** The target of the symlink an `O_PATH | O_NOFOLLOW` descriptor holds. */
export function readLink(c: Libc, fd: number, what: string): string {
  const buffer = Buffer.alloc(4096);
  const n = c.readlinkat(fd, cstr(""), buffer, buffer.length);
  if (n < 0) fail(c, "readlinkat", what);
  return buffer.subarray(0, n).toString("utf8");
}

/**
 * An `O_PATH` descriptor of what `relative` names beneath `root`, following symlinks that stay beneath
 * it: relative targets (`..` never above `root`), and absolute targets under one of `roots` (the paths
 * by which the anchor itself is known, as links made on the host spell it). Every other link, and a
 * `..` above the anchor, is EXDEV; each name is opened with openat2 and no symlink on the way, relative
 * to a descriptor already held, so a folder swapped meanwhile cannot redirect the walk.
 */
export function resolveFollowing(c: Libc, root: number, relative: string, roots: string[]): number {
  const held: number[] = [];
  const top = () => held.at(-1) ?? root;
  let pending = parts(relative);
  let links = 0;
  try {
    while (pending.length > 0) {
      const name = pending.shift() as string;
      if (name === "..") {
        if (held.length === 0) throw fileRefusal("EXDEV", `'${relative}' leads outside the folder`);
        closeSync(held.pop() as number);
        continue;
      }
      const fd = check(c, openat2Raw(c, top(), name, O_PATH | O_NOFOLLOW, 0, RESOLVE), "openat2", relative);
      const stat = fstatSync(fd);
      if (stat.isSymbolicLink()) {
        let target: string;
        try {
          target = readLink(c, fd, relative);
        } finally {
          closeSync(fd);
        }
        if (++links > MAX_LINKS) throw fileRefusal("ELOOP", `'${relative}': too many symbolic links`);
        if (target.startsWith("/")) {
          const base = roots.find((r) => target === r || target.startsWith(`${r}/`));
          if (base === undefined) throw fileRefusal("EXDEV", `'${relative}' leads outside the folder`);
          while (held.length > 0) closeSync(held.pop() as number);
          target = target.slice(base.length);
        }
        pending = [...parts(target), ...pending];
        continue;
      }
      if (pending.length === 0) return fd;
      if (!stat.isDirectory()) {
        closeSync(fd);
        throw fileRefusal("ENOTDIR", `ENOTDIR: '${relative}'`);
      }
      held.push(fd);
    }
    // The path named the anchor itself or ended on a folder through `..`.
    return check(
      c,
      openat2Raw(c, top(), ".", O_PATH | O_DIRECTORY | O_NOFOLLOW, 0, RESOLVE),
      "openat2",
      relative,
    );
  } finally {
    for (const fd of held) closeSync(fd);
  }
}

/**
 * Where `relative` leads beneath `root` with links inside followed (resolveFollowing), relative to the
 * folder: what it names, or when that does not exist yet its folder plus its name, or `relative` itself.
 */
export function whereInside(c: Libc, root: number, relative: string, roots: string[]): string {
  const base = readlinkSync(`/proc/self/fd/${root}`);
  const real = (path: string) => {
    const fd = resolveFollowing(c, root, path, roots);
    try {
      const found = readlinkSync(`/proc/self/fd/${fd}`);
      if (found === base) return "";
      if (!found.startsWith(`${base}/`)) throw fileRefusal("EXDEV", `'${relative}' leads outside the folder`);
      return found.slice(base.length + 1);
    } finally {
      closeSync(fd);
    }
  };
  const missing = (error: unknown) => (error as { code?: string }).code === "ENOENT";
  try {
    return real(relative);
  } catch (error) {
    if (!missing(error)) throw error;
  }
  const names = parts(relative);
  const name = names.pop();
  if (!name) return relative;
  try {
    const folder = real(names.join("/"));
    return folder ? `${folder}/${name}` : name;
  } catch (error) {
    if (missing(error)) return relative;
    throw error;
  }
}

/**
 * The permission bits of the regular file `name` in `dir`, if there is one, for a file written over it
 * to keep; never set-id bits (the server may be root, and the old file's mode is whatever the sandbox
 * made it).
 */
export function modeOf(c: Libc, dir: number, name: string): number | undefined {
  const fd = openat2Raw(c, dir, name, O_PATH | O_NOFOLLOW, 0, RESOLVE);
  if (fd < 0) return undefined;
  try {
    const stat = fstatSync(fd);
    return stat.isFile() ? stat.mode & 0o777 : undefined;
  } finally {
    closeSync(fd);
  }
}
