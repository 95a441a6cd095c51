/**
 * The file operations under pi's `read`, `write` and `edit` tools in local mode, where they run in the
 * server process (protected mode's run in the sandbox: sandbox-tools.ts). The guard (guard.ts) has
 * already refused any path outside the workspace; these then open the file beneath the workspace
 * folder (server/workspace/beneath.ts), never by name, because the model's shell can plant anything
 * under a name inside it:
 * - reads take only a regular file with one name, at most 64 MiB, following a symlink only while it
 *   stays inside the workspace: a named pipe never blocks the server (it is not opened), a hard link to
 *   a file kept elsewhere is refused, a 1 GiB sparse file is refused unread;
 * - writes follow a symlink only while it stays inside (a `CLAUDE.md` linked to `AGENTS.md` edits
 *   `AGENTS.md`), then go to a temp file renamed over the name found, so a pipe planted there is
 *   replaced, never written through, and a link out is refused.
 * Errors name the path relative to the workspace, never the server's.
 */
import { readSync } from "node:fs";
import type { EditOperations, ReadOperations, WriteOperations } from "@mariozechner/pi-coding-agent";
import { Beneath } from "../../workspace/beneath.ts";
import { fileRefusal, readCapped } from "../../workspace/regular-file.ts";
import { spellings } from "./owner-resources.ts";

/** Largest file a tool reads (the read tool shows far less of it; images are sent whole). */
export const TOOL_MAX_BYTES = 64 * 1024 * 1024;
const SNIFF_BYTES = 16;

export interface WorkspaceIo {
  read: ReadOperations;
  edit: EditOperations;
  write: WriteOperations;
}

export function workspaceIo(workspaceDir: string): WorkspaceIo {
  const fs = new Beneath(workspaceDir);
  // The workspace folder is the server's (the shell cannot rename it): its own spellings, for links
  // made with absolute paths and for the paths pi resolves.
  const roots = () => spellings(workspaceDir);
  const relative = (absolute: string) => {
    for (const root of roots()) {
      if (absolute === root) return "";
      if (absolute.startsWith(`${root}/`)) return absolute.slice(root.length + 1);
    }
    throw fileRefusal("EXDEV", "The path is outside your workspace.");
  };
  const open = <T>(absolute: string, max: number, use: (fd: number, size: number, rel: string) => T) => {
    const rel = relative(absolute);
    try {
      return fs.withFile(rel, max, (fd, stat) => use(fd, stat.size, rel), roots());
    } catch (error) {
      throw readable(error, rel);
    }
  };
  const readFile = async (absolute: string) =>
    open(absolute, TOOL_MAX_BYTES, (fd, size, rel) => readCapped(fd, size, rel, TOOL_MAX_BYTES));
  const access = async (absolute: string) => open(absolute, Number.MAX_SAFE_INTEGER, () => undefined);
  const writeFile = async (absolute: string, content: string) => {
    const rel = relative(absolute);
    try {
      fs.writeFile(fs.resolveInside(rel, roots()), content);
    } catch (error) {
      throw readable(error, rel);
    }
  };
  return {
    read: {
      readFile,
      access,
      detectImageMimeType: async (absolute) =>
        open(absolute, Number.MAX_SAFE_INTEGER, (fd) => {
          const head = Buffer.alloc(SNIFF_BYTES);
          return imageType(head.subarray(0, readSync(fd, head, 0, SNIFF_BYTES, 0)));
        }),
    },
    edit: { readFile, access, writeFile },
    write: {
      writeFile,
      mkdir: async (absolute) => {
        const rel = relative(absolute);
        try {
          fs.mkdir(fs.resolveInside(rel, roots()));
        } catch (error) {
          throw readable(error, rel);
        }
      },
    },
  };
}

/** The four image types pi's read tool sends as images, by their first bytes. */
function imageType(head: Buffer): string | null {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (
    head
      .subarray(0, 6)
      .toString("latin1")
      .match(/^GIF8[79]a$/)
  )
    return "image/gif";
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP")
    return "image/webp";
  return null;
}

/** An error the model can act on, naming the path as it wrote it (relative to the workspace). */
function readable(error: unknown, rel: string): Error {
  const code = (error as { code?: string }).code;
  const name = rel || ".";
  const message: Record<string, string> = {
    ENOENT: `No such file: ${name}`,
    ENOTDIR: `No such file: ${name}`,
    EXDEV: `The path '${name}' leads outside your workspace.`,
    ELOOP: `The path '${name}' goes through a symbolic link; use the path it points to.`,
    EISDIR: `${name} is a directory`,
    ENOTREG: `${name} is not a regular file (a pipe, socket or device): not read`,
    EMLINK: `${name} has other names (hard links): not read`,
    EFBIG: `${name} is larger than ${TOOL_MAX_BYTES} bytes: not read`,
  };
  return new Error(message[code ?? ""] ?? `${name} could not be opened (${code ?? "error"})`);
}
