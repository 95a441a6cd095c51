/**
 * Reading an owner's agent workspace: the tree (directories first, then names; only contract names at
 * the top; symlinks listed as files and never followed) and one file by canonical path, opened safely:
 * the path must be canonical (`agent-workspace/...`, no `.` or `..` segment), the file is opened first
 * and its real path and inode checked afterwards, so a symlink swapped in cannot point the read outside.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { AppError } from "../../http/errors.ts";
import { Beneath } from "../../workspace/beneath.ts";
import { canonical, ROOT_FILES, SECTIONS, WORKSPACE_DIR } from "./contract.ts";

/** Files larger than this are listed but not returned (`status: "too-large"`). */
export const MAX_FILE_BYTES = 256 * 1024;
const MAX_NODES = 5000;
const MAX_DEPTH = 16;
const TOP_LEVEL = new Set<string>([...SECTIONS.map((s) => s.name), ...ROOT_FILES]);

export interface TreeNode {
  name: string;
  path: string;
  type: "directory" | "file";
  children?: TreeNode[];
}

export function tree(root: string): { root: string; nodes: TreeNode[]; diagnostics: string[] } {
  const diagnostics: string[] = [];
  let count = 0;
  // Listed through descriptors beneath the workspace folder: a folder the sandbox swaps for a symlink
  // between two listings must not have the server list a host folder.
  const confined = new Beneath(dirname(root));
  const walk = (relative: string, depth: number): TreeNode[] => {
    const all = confined.entries(relative ? `${basename(root)}/${relative}` : basename(root));
    const entries = all
      .filter((e) => depth > 0 || TOP_LEVEL.has(e.name))
      .sort(
        (a, b) => Number(b.stat.isDirectory()) - Number(a.stat.isDirectory()) || a.name.localeCompare(b.name),
      );
    if (depth === 0) {
      const dropped = all.map((e) => e.name).filter((name) => !TOP_LEVEL.has(name));
      if (dropped.length > 0)
        diagnostics.push(`Dropped non-workspace entries: ${dropped.slice(0, 20).join(", ")}`);
    }
    const nodes: TreeNode[] = [];
    for (const entry of entries) {
      if (++count > MAX_NODES) {
        if (count === MAX_NODES + 1) diagnostics.push(`Listing stopped at ${MAX_NODES} entries`);
        break;
      }
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      const node: TreeNode = {
        name: entry.name,
        path: canonical(rel),
        type: entry.stat.isDirectory() ? "directory" : "file",
      };
      if (entry.stat.isDirectory()) {
        node.children = depth + 1 < MAX_DEPTH ? walk(rel, depth + 1) : [];
      }
      nodes.push(node);
    }
    return nodes;
  };
  return { root: WORKSPACE_DIR, nodes: walk("", 0), diagnostics };
}

export interface WorkspaceFile {
  path: string;
  name: string;
  content: string;
  mediaType: "text/markdown" | "text/plain" | "application/octet-stream";
  size: number;
  status: "ok" | "too-large" | "unsupported";
}

const fail = (status: number, message: string) =>
  new AppError(status === 404 ? "not_found" : status === 403 ? "forbidden" : "invalid", message, { status });

/** The relative path inside the workspace of a canonical path, or a 400/403 saying why it is not one. */
export function relativeOf(path: string | undefined): string {
  if (!path || path.trim() === "") throw fail(400, "Missing workspace file path.");
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path)) {
    throw fail(400, "Workspace file path must be project-relative.");
  }
  const parts = path.split("/");
  if (
    parts[0] !== WORKSPACE_DIR ||
    parts.some((p) => p === "." || p === ".." || p.includes("\\") || p.includes("\0"))
  ) {
    throw fail(403, "Workspace file path is outside agent-workspace.");
  }
  const relative = parts.slice(1).filter(Boolean).join("/");
  if (relative === "") throw fail(400, "Workspace path is a directory. Provide a path to a specific file.");
  return relative;
}

/** Linux's O_PATH (a descriptor that opens nothing); undefined elsewhere. */
const PATH_ONLY = process.platform === "linux" ? 0o10000000 : undefined;

export function readWorkspaceFile(root: string, path: string | undefined): WorkspaceFile {
  const relative = relativeOf(path);
  const target = join(root, relative);
  let fd: number;
  try {
    // Linux: first an O_PATH descriptor, which opens nothing (a device swapped in by the sandbox is never
    // opened for real, so no driver runs); the read below reopens that same inode, not the name.
    // Non-blocking either way: a named pipe planted in the workspace must not hang the server.
    fd = openSync(target, PATH_ONLY ?? constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw fail(404, "Workspace file was not found.");
    if (code === "EACCES" || code === "EPERM") throw fail(403, "Permission denied accessing workspace file.");
    if (code === "EISDIR") throw fail(400, "Workspace path is not a file.");
    throw fail(404, "Workspace file was not found.");
  }
  try {
    const opened = fstatSync(fd);
    if (opened.isDirectory()) throw fail(400, "Workspace path is not a file.");
    if (!opened.isFile()) throw fail(403, "Workspace file path validation failed.");
    // The file now held must be the one its real path names, and that path inside the root.
    const real = realpathSync(target);
    const realRoot = realpathSync(root);
    if (!real.startsWith(`${realRoot}${sep}`))
      throw fail(403, "Workspace file path is outside agent-workspace.");
    const named = statSync(real);
    if (named.ino !== opened.ino || named.dev !== opened.dev)
      throw fail(403, "Workspace file path validation failed.");
    if (PATH_ONLY !== undefined) {
      const held = fd;
      fd = openSync(`/proc/self/fd/${held}`, constants.O_RDONLY | constants.O_NONBLOCK);
      closeSync(held);
    }
    const base = { path: canonical(relative), name: basename(relative), size: opened.size };
    if (opened.size > MAX_FILE_BYTES)
      return { ...base, content: "", mediaType: "text/plain", status: "too-large" };
    const bytes = Buffer.alloc(opened.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    const data = bytes.subarray(0, read);
    if (data.subarray(0, 8192).includes(0)) {
      return { ...base, content: "", mediaType: "application/octet-stream", status: "unsupported" };
    }
    const mediaType = relative.toLowerCase().endsWith(".md") ? "text/markdown" : "text/plain";
    return { ...base, content: data.toString("utf8"), mediaType, status: "ok" };
  } finally {
    closeSync(fd);
  }
}

/** Whether a path is a regular file (not a link), for walkers that must not follow links. */
export function isPlainFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
