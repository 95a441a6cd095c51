/**
 * The workspace `files/` namespace (`<data>/workspaces/<owner folder>/files/`, workspace/owner-folders.ts),
 * shared by the Files API and the sandbox's host tools. Every path from a request is confined to the
 * root: no absolute paths, no `..`, no NUL, and no symlink anywhere on the way (so nothing resolves
 * outside). Writes that carry a SHA-256 precondition fail with 409 when the file changed since it was read.
 */
import { createHash } from "node:crypto";
import { mkdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../http/errors.ts";
import { Beneath, isEscape } from "../../workspace/beneath.ts";
import { ownerFolders } from "../../workspace/owner-folders.ts";

export const LIST_LIMIT = 1000;

export interface FileEntry {
  path: string;
  type: "file" | "directory";
  size: number;
  modifiedAt: string;
}

export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

const invalid = (message: string) => new AppError("invalid", message);
const conflict = (message: string, code = "conflict") => new AppError("conflict", message, { code });
const FILES = "files";

export class TurnWorkspaceFiles {
  readonly root: string;
  /**
   * Anchored at the workspace folder, not at `files/`: the sandbox owns everything inside the workspace
   * and could swap `files` itself for a symlink; the workspace folder it cannot rename.
   */
  private readonly fs: Beneath;
  private readonly workspace: string;

  /**
   * `reserver()` is awaited at the start of every write; the check it returns, `reserve(adding,
   * replacing)`, runs just before the write and throws when it does not fit the owner's quota
   * (services/quota.ts). Between the check and the write nothing yields, so nothing else writes there.
   */
  constructor(
    dataDir: string,
    owner: string,
    private readonly maxBytes: number,
    private readonly reserver: () => Promise<(adding: number, replacing: number) => void> = async () =>
      () => {},
  ) {
    const folders = ownerFolders(dataDir, owner);
    this.root = folders.files;
    this.workspace = folders.workspace;
    this.fs = new Beneath(folders.workspace);
  }

  /**
   * The path below the workspace folder (`files/...`) for a relative one, after checking every segment
   * (no symlink on the way). The check gives the clear errors; the safety comes from `Beneath`, which
   * resolves the path again in the kernel at each use and refuses what changed since.
   */
  resolve(path: string, options: { allowRoot?: boolean } = {}): string {
    return join(this.workspace, this.checked(path, options));
  }

  /** The checked path relative to the workspace folder (`files/...`), the form `Beneath` takes. */
  private checked(path: string, options: { allowRoot?: boolean } = {}): string {
    if (path.includes("\0")) throw invalid("path must not contain NUL");
    const clean = path.replaceAll("\\", "/");
    if (clean.startsWith("/") || /^[A-Za-z]:/.test(clean))
      throw invalid("path must be relative to the workspace");
    const parts = clean.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.includes("..")) throw invalid("path must not contain '..'");
    if (parts.length === 0 && !options.allowRoot) throw invalid("path must name a file");
    if (parts.some((p) => Buffer.byteLength(p) > 255))
      throw invalid("a path segment is longer than 255 bytes");
    mkdirSync(this.workspace, { recursive: true });
    this.guard(() => this.fs.mkdir(FILES));
    let current = FILES;
    for (const [i, part] of parts.entries()) {
      current = `${current}/${part}`;
      const stat = this.guard(() => this.fs.stat(current));
      if (!stat) break; // nothing below a missing segment exists either
      if (stat.isSymbolicLink()) throw invalid("path must not go through a symbolic link");
      if (i < parts.length - 1 && !stat.isDirectory())
        throw conflict(`'${parts.slice(0, i + 1).join("/")}' is a file, not a directory`, "not_a_directory");
    }
    return [FILES, ...parts].join("/");
  }

  /** Runs a file operation, turning what the kernel refused on the way into the store's own errors. */
  private guard<T>(use: () => T, path?: string): T {
    try {
      return use();
    } catch (error) {
      if (isEscape(error)) throw invalid("path must not go through a symbolic link");
      const code = (error as { code?: string }).code;
      if (code === "ENOTDIR")
        throw conflict("a folder on the path is a file, not a directory", "not_a_directory");
      if (code === "ENOENT" && path !== undefined) throw new AppError("not_found", `No such file: ${path}`);
      if (code === "EISDIR" && path !== undefined) throw conflict(`${path} is a directory`);
      if (code === "ENOTREG") throw conflict(`${path ?? "the path"} is not a regular file`);
      // A second name of a file kept elsewhere (server/workspace/regular-file.ts): never read through.
      if (code === "EMLINK") throw conflict(`${path ?? "the path"} has other names (hard links): not read`);
      if (code === "EFBIG")
        throw new AppError("too_large", `${path ?? "the file"} is larger than ${this.maxBytes} bytes`);
      throw error;
    }
  }

  private lstat(rel: string): Stats | undefined {
    return this.guard(() => this.fs.stat(rel));
  }

  private bytes(rel: string, path: string): Buffer {
    const bytes = this.guard(() => this.fs.readFile(rel, this.maxBytes), path);
    if (!bytes) throw new AppError("not_found", `No such file: ${path}`);
    return bytes;
  }

  private statOf(path: string, rel = this.checked(path)): Stats {
    const stat = this.lstat(rel);
    if (!stat) throw new AppError("not_found", `No such file: ${path}`);
    return stat;
  }

  list(path = ""): { items: FileEntry[]; truncated: boolean } {
    const start = this.checked(path, { allowRoot: true });
    const stat = this.lstat(start);
    if (!stat) {
      if (start === FILES) return { items: [], truncated: false };
      throw new AppError("not_found", `No such file: ${path}`);
    }
    if (!stat.isDirectory()) return { items: [entryOf(path, stat)], truncated: false };
    const items: FileEntry[] = [];
    const prefix = start === FILES ? "" : `${start.slice(FILES.length + 1)}/`;
    const complete = this.guard(() =>
      this.fs.walk(start, (rel, name, entry) => {
        if (items.length >= LIST_LIMIT) return "stop";
        if (entry.isSymbolicLink()) return false;
        items.push(entryOf(`${prefix}${rel}${name}`, entry));
        return true;
      }),
    );
    return { items, truncated: !complete };
  }

  stat(path: string): FileEntry & { sha256: string | null } {
    const rel = this.checked(path);
    const stat = this.statOf(path, rel);
    const entry = entryOf(normal(path), stat);
    return { ...entry, sha256: stat.isFile() ? sha256(this.bytes(rel, path)) : null };
  }

  readPage(path: string, offset: number, pageBytes: number) {
    const rel = this.checked(path);
    const stat = this.statOf(path, rel);
    if (!stat.isFile()) throw conflict(`${path} is a directory`);
    const bytes = this.bytes(rel, path);
    if (offset > bytes.length) throw invalid("offset is past the end of the file");
    let end = Math.min(bytes.length, offset + pageBytes);
    // Never cut a UTF-8 character in two: back off to the start of the character.
    while (end < bytes.length && end > offset && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    const content = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(offset, end));
    return {
      path: normal(path),
      content,
      offset,
      nextOffset: end < bytes.length ? end : null,
      size: bytes.length,
      sha256: sha256(bytes),
    };
  }

  readText(path: string): string {
    const rel = this.checked(path);
    const stat = this.statOf(path, rel);
    if (!stat.isFile()) throw conflict(`${path} is a directory`);
    return this.bytes(rel, path).toString("utf8");
  }

  /** Create, or overwrite when `overwrite` is true (or a precondition is given). */
  async put(path: string, content: string, options: { sha256?: string; overwrite?: boolean } = {}) {
    const reserve = await this.reserver();
    const rel = this.checked(path);
    const stat = this.lstat(rel);
    if (stat?.isDirectory()) throw conflict(`${path} is a directory`);
    if (stat && !options.overwrite && !options.sha256) {
      throw conflict(`${path} exists; pass overwrite: true or its sha256 to replace it`, "file_exists");
    }
    if (options.sha256) this.checkPrecondition(rel, path, options.sha256);
    this.checkSize(Buffer.byteLength(content));
    reserve(Buffer.byteLength(content), stat?.size ?? 0);
    return this.write(rel, path, content);
  }

  async append(path: string, content: string, options: { sha256?: string } = {}) {
    const reserve = await this.reserver();
    const rel = this.checked(path);
    const stat = this.lstat(rel);
    if (stat?.isDirectory()) throw conflict(`${path} is a directory`);
    if (options.sha256) this.checkPrecondition(rel, path, options.sha256);
    this.checkSize((stat?.size ?? 0) + Buffer.byteLength(content));
    reserve(Buffer.byteLength(content), 0);
    this.guard(() => this.fs.appendFile(rel, content), path);
    return this.written(rel, path);
  }

  async patch(path: string, old: string, replacement: string, options: { sha256?: string } = {}) {
    const reserve = await this.reserver();
    const rel = this.checked(path);
    if (options.sha256) this.checkPrecondition(rel, path, options.sha256);
    const text = this.readText(path);
    const first = text.indexOf(old);
    if (first === -1) throw conflict("`old` does not occur in the file", "patch_no_match");
    if (text.indexOf(old, first + 1) !== -1)
      throw conflict("`old` occurs more than once in the file", "patch_ambiguous");
    const next = text.slice(0, first) + replacement + text.slice(first + old.length);
    this.checkSize(Buffer.byteLength(next));
    reserve(Buffer.byteLength(next), Buffer.byteLength(text));
    return this.write(rel, path, next);
  }

  delete(path: string, options: { sha256?: string } = {}) {
    const rel = this.checked(path);
    const stat = this.statOf(path, rel);
    if (stat.isDirectory()) {
      try {
        this.guard(() => this.fs.remove(rel, true), path);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "ENOTEMPTY" || code === "EEXIST")
          throw conflict(`${path} is a directory that is not empty`, "directory_not_empty");
        throw error;
      }
    } else {
      if (options.sha256) this.checkPrecondition(rel, path, options.sha256);
      this.guard(() => this.fs.remove(rel, false), path);
    }
    return { path: normal(path), deleted: true as const };
  }

  private checkPrecondition(rel: string, path: string, expected: string) {
    const stat = this.lstat(rel);
    const actual = stat?.isFile() ? sha256(this.bytes(rel, path)) : null;
    if (actual !== expected)
      throw conflict(`${path} changed since it was read (sha256 precondition failed)`, "stale_sha256");
  }

  private checkSize(bytes: number) {
    if (bytes > this.maxBytes) throw new AppError("too_large", `Files are limited to ${this.maxBytes} bytes`);
  }

  /** Writes through a temp file and a rename, so a reader never sees half a file. */
  private write(rel: string, path: string, content: string) {
    this.guard(() => this.fs.writeFile(rel, content), path);
    return this.written(rel, path);
  }

  private written(rel: string, path: string) {
    const bytes = this.bytes(rel, path);
    return { path: normal(path), size: bytes.length, sha256: sha256(bytes) };
  }
}

function normal(path: string): string {
  return path
    .replaceAll("\\", "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}

function entryOf(path: string, stat: Stats): FileEntry {
  return {
    path: normal(path),
    type: stat.isDirectory() ? "directory" : "file",
    size: stat.isDirectory() ? 0 : stat.size,
    modifiedAt: stat.mtime.toISOString(),
  };
}

/** Relative paths under a directory, bounded, not following symlinks (the volume tree). */
export function treeOf(root: string, limit: number): { paths: string[]; truncated: boolean } {
  const paths: string[] = [];
  const fs = new Beneath(root);
  try {
    if (!fs.stat("")?.isDirectory()) return { paths, truncated: false };
  } catch {
    return { paths, truncated: false };
  }
  const complete = fs.walk("", (rel, name, stat) => {
    if (paths.length >= limit) return "stop";
    if (stat.isSymbolicLink()) return false;
    paths.push(stat.isDirectory() ? `${rel}${name}/` : `${rel}${name}`);
    return true;
  });
  return { paths, truncated: !complete };
}
