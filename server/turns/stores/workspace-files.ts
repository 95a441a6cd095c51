/**
 * The workspace `files/` namespace (`<data>/workspaces/<owner folder>/files/`, workspace/owner-folders.ts),
 * shared by the Files API and the sandbox's host tools. Every path from a request is confined to the
 * root: no absolute paths, no `..`, no NUL, and no symlink anywhere on the way (so nothing resolves
 * outside). Writes that carry a SHA-256 precondition fail with 409 when the file changed since it was read.
 */
import { createHash } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, sep } from "node:path";
import { AppError } from "../../http/errors.ts";
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

export class TurnWorkspaceFiles {
  readonly root: string;

  /**
   * `reserve(adding, replacing)` is asked before every write and throws when it does not fit the owner's
   * quota (services/quota.ts).
   */
  constructor(
    dataDir: string,
    owner: string,
    private readonly maxBytes: number,
    private readonly reserve: (adding: number, replacing: number) => void = () => {},
  ) {
    this.root = ownerFolders(dataDir, owner).files;
  }

  /** The absolute path for a relative one, after checking every segment (no symlink on the way). */
  resolve(path: string, options: { allowRoot?: boolean } = {}): string {
    if (path.includes("\0")) throw invalid("path must not contain NUL");
    const clean = path.replaceAll("\\", "/");
    if (clean.startsWith("/") || /^[A-Za-z]:/.test(clean))
      throw invalid("path must be relative to the workspace");
    const parts = clean.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.includes("..")) throw invalid("path must not contain '..'");
    if (parts.length === 0 && !options.allowRoot) throw invalid("path must name a file");
    mkdirSync(this.root, { recursive: true });
    if (parts.some((p) => Buffer.byteLength(p) > 255))
      throw invalid("a path segment is longer than 255 bytes");
    let current = this.root;
    for (const [i, part] of parts.entries()) {
      current = join(current, part);
      const stat = lstatSync(current, { throwIfNoEntry: false });
      if (!stat) break; // nothing below a missing segment exists either
      if (stat.isSymbolicLink()) throw invalid("path must not go through a symbolic link");
      if (i < parts.length - 1 && !stat.isDirectory())
        throw conflict(`'${parts.slice(0, i + 1).join("/")}' is a file, not a directory`, "not_a_directory");
    }
    current = join(this.root, ...parts);
    if (current !== this.root && !current.startsWith(this.root + sep))
      throw invalid("path escapes the workspace");
    return current;
  }

  private statOf(path: string): Stats {
    const stat = lstatSync(this.resolve(path), { throwIfNoEntry: false });
    if (!stat) throw new AppError("not_found", `No such file: ${path}`);
    return stat;
  }

  list(path = ""): { items: FileEntry[]; truncated: boolean } {
    const start = this.resolve(path, { allowRoot: true });
    if (!existsSync(start)) {
      if (start === this.root) return { items: [], truncated: false };
      throw new AppError("not_found", `No such file: ${path}`);
    }
    const items: FileEntry[] = [];
    const prefix = start === this.root ? "" : `${start.slice(this.root.length + 1).replaceAll(sep, "/")}/`;
    const walk = (dir: string, rel: string): boolean => {
      for (const name of readdirSync(dir).sort()) {
        if (items.length >= LIST_LIMIT) return false;
        const abs = join(dir, name);
        const stat = lstatSync(abs);
        if (stat.isSymbolicLink()) continue;
        const entry = entryOf(`${rel}${name}`, stat);
        items.push(entry);
        if (stat.isDirectory() && !walk(abs, `${rel}${name}/`)) return false;
      }
      return true;
    };
    if (!lstatSync(start).isDirectory())
      return { items: [entryOf(path, lstatSync(start))], truncated: false };
    return { items, truncated: !walk(start, prefix) };
  }

  stat(path: string): FileEntry & { sha256: string | null } {
    const stat = this.statOf(path);
    const entry = entryOf(normal(path), stat);
    return { ...entry, sha256: stat.isFile() ? sha256(readFileSync(this.resolve(path))) : null };
  }

  readPage(path: string, offset: number, pageBytes: number) {
    const stat = this.statOf(path);
    if (!stat.isFile()) throw conflict(`${path} is a directory`);
    const bytes = readFileSync(this.resolve(path));
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
    const stat = this.statOf(path);
    if (!stat.isFile()) throw conflict(`${path} is a directory`);
    return readFileSync(this.resolve(path), "utf8");
  }

  /** Create, or overwrite when `overwrite` is true (or a precondition is given). */
  put(path: string, content: string, options: { sha256?: string; overwrite?: boolean } = {}) {
    const abs = this.resolve(path);
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    if (stat?.isDirectory()) throw conflict(`${path} is a directory`);
    if (stat && !options.overwrite && !options.sha256) {
      throw conflict(`${path} exists; pass overwrite: true or its sha256 to replace it`, "file_exists");
    }
    if (options.sha256) this.checkPrecondition(abs, path, options.sha256);
    this.checkSize(Buffer.byteLength(content));
    this.reserve(Buffer.byteLength(content), stat?.size ?? 0);
    return this.write(abs, path, content);
  }

  append(path: string, content: string, options: { sha256?: string } = {}) {
    const abs = this.resolve(path);
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    if (stat?.isDirectory()) throw conflict(`${path} is a directory`);
    if (options.sha256) this.checkPrecondition(abs, path, options.sha256);
    this.checkSize((stat?.size ?? 0) + Buffer.byteLength(content));
    this.reserve(Buffer.byteLength(content), 0);
    mkdirSync(join(abs, ".."), { recursive: true });
    appendFileSync(abs, content);
    return this.written(abs, path);
  }

  patch(path: string, old: string, replacement: string, options: { sha256?: string } = {}) {
    const abs = this.resolve(path);
    if (options.sha256) this.checkPrecondition(abs, path, options.sha256);
    const text = this.readText(path);
    const first = text.indexOf(old);
    if (first === -1) throw conflict("`old` does not occur in the file", "patch_no_match");
    if (text.indexOf(old, first + 1) !== -1)
      throw conflict("`old` occurs more than once in the file", "patch_ambiguous");
    const next = text.slice(0, first) + replacement + text.slice(first + old.length);
    this.checkSize(Buffer.byteLength(next));
    this.reserve(Buffer.byteLength(next), Buffer.byteLength(text));
    return this.write(abs, path, next);
  }

  delete(path: string, options: { sha256?: string } = {}) {
    const abs = this.resolve(path);
    const stat = this.statOf(path);
    if (stat.isDirectory()) {
      if (readdirSync(abs).length > 0)
        throw conflict(`${path} is a directory that is not empty`, "directory_not_empty");
      rmdirSync(abs);
    } else {
      if (options.sha256) this.checkPrecondition(abs, path, options.sha256);
      unlinkSync(abs);
    }
    return { path: normal(path), deleted: true as const };
  }

  private checkPrecondition(abs: string, path: string, expected: string) {
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    const actual = stat?.isFile() ? sha256(readFileSync(abs)) : null;
    if (actual !== expected)
      throw conflict(`${path} changed since it was read (sha256 precondition failed)`, "stale_sha256");
  }

  private checkSize(bytes: number) {
    if (bytes > this.maxBytes) throw new AppError("too_large", `Files are limited to ${this.maxBytes} bytes`);
  }

  /** Writes through a temp file and a rename, so a reader never sees half a file. */
  private write(abs: string, path: string, content: string) {
    mkdirSync(join(abs, ".."), { recursive: true });
    const temp = `${abs}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, content);
    renameSync(temp, abs);
    return this.written(abs, path);
  }

  private written(abs: string, path: string) {
    const bytes = readFileSync(abs);
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
  if (!existsSync(root)) return { paths, truncated: false };
  const walk = (dir: string, rel: string): boolean => {
    for (const name of readdirSync(dir).sort()) {
      if (paths.length >= limit) return false;
      const stat = lstatSync(join(dir, name));
      if (stat.isSymbolicLink()) continue;
      paths.push(stat.isDirectory() ? `${rel}${name}/` : `${rel}${name}`);
      if (stat.isDirectory() && !walk(join(dir, name), `${rel}${name}/`)) return false;
    }
    return true;
  };
  return { paths, truncated: !walk(root, "") };
}
