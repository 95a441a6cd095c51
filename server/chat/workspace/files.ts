/**
 * Reading an owner's agent workspace, through the descriptor of the folder the request opened once
 * (contract.ts `openAgentWorkspace`): the tree (directories first, then names; only contract names at
 * the top; symlinks listed as files and never followed) and one file by canonical path (no `.` or `..`
 * segment). The file route follows symlinks that stay inside the folder, as the reference client's does, but the
 * kernel resolves each name beneath the held descriptor and a link is only followed where its target
 * stays beneath it (server/workspace/regular-file.ts), so a folder the sandbox swaps for a symlink to
 * /etc mid-request leads nowhere; only a regular file with one name is read, at most 256 KiB of it.
 */
import { basename } from "node:path";
import { AppError } from "../../http/errors.ts";
import type { Beneath } from "../../workspace/beneath.ts";
import { readCapped } from "../../workspace/regular-file.ts";
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

export function tree(aw: Beneath): { root: string; nodes: TreeNode[]; diagnostics: string[] } {
  const diagnostics: string[] = [];
  let count = 0;
  // Each folder is listed through its own descriptor, opened beneath the held one: a folder the sandbox
  // swaps for a symlink between two listings must not have the server list a host folder.
  const walk = (relative: string, depth: number): TreeNode[] => {
    const all = aw.entries(relative);
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

/** What a refused open means for the route (the reference client's status and words). */
function refused(error: unknown): AppError {
  const code = (error as { code?: string }).code;
  if (code === "ENOENT" || code === "ENOTDIR") return fail(404, "Workspace file was not found.");
  if (code === "EXDEV" || code === "ELOOP")
    return fail(403, "Workspace file path is outside agent-workspace.");
  if (code === "EACCES" || code === "EPERM") return fail(403, "Permission denied accessing workspace file.");
  if (code === "EISDIR") return fail(400, "Workspace path is not a file.");
  if (code === "ENOTREG" || code === "EMLINK") return fail(403, "Workspace file path validation failed.");
  return fail(404, "Workspace file was not found.");
}

/**
 * One file of the opened agent workspace. `inside` are the absolute paths by which the folder itself is
 * known (an absolute symlink made on the host names it so): links to them are followed, any other
 * absolute link is refused.
 */
export function readWorkspaceFile(aw: Beneath, path: string | undefined, inside: string[]): WorkspaceFile {
  const relative = relativeOf(path);
  // Opened whatever its size, so a large file is reported as such; only up to the cap is ever read.
  const read = (fd: number, { size }: { size: number }): WorkspaceFile => {
    const base = { path: canonical(relative), name: basename(relative), size };
    const tooLarge = { ...base, content: "", mediaType: "text/plain", status: "too-large" } as const;
    if (size > MAX_FILE_BYTES) return tooLarge;
    let data: Buffer;
    try {
      data = readCapped(fd, size, relative, MAX_FILE_BYTES); // it may have grown since
    } catch {
      return tooLarge;
    }
    if (data.subarray(0, 8192).includes(0))
      return { ...base, content: "", mediaType: "application/octet-stream", status: "unsupported" };
    const mediaType = relative.toLowerCase().endsWith(".md") ? "text/markdown" : "text/plain";
    return { ...base, content: data.toString("utf8"), mediaType, status: "ok" };
  };
  try {
    return aw.withFile(relative, Number.MAX_SAFE_INTEGER, read, inside);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw refused(error);
  }
}
