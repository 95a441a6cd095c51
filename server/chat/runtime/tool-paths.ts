/**
 * Where pi's file tools actually go, so the guard checks the file a tool opens, not the string a model
 * wrote.
 *
 * pi resolves a tool's `path` itself, in `dist/core/tools/path-utils.js` (not exported): one leading `@`
 * is dropped, Unicode spaces become plain spaces, `~` and `~/…` become the server user's home, an
 * absolute path is kept exactly as written (not normalised: the kernel applies its `..` after following
 * symlinks), anything else is resolved lexically against the workspace; `read` then tries macOS
 * spellings of a missing file (narrow no-break space before AM/PM, NFD, curly apostrophe) and opens the
 * first that exists. The `pi*` functions below mirror those rules exactly; tests/chat/tool-paths.test.ts
 * pins them against pi's own functions and against what pi's real tools do on disk.
 *
 * `physicalPath` then walks the result the way open(2) and `mkdir -p` do: component by component,
 * following every symlink (dangling ones too: a write creates their target), applying `..` to where the
 * walk really is. Missing components are taken as plain folders, as `write` creates them.
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
/** Linux's own limit on symlinks followed in one lookup (ELOOP past it). */
const MAX_LINKS = 40;

/** pi's `expandPath`: `@` prefix dropped, Unicode spaces normalised, `~` and `~/` expanded to home. */
export function piExpandPath(filePath: string): string {
  const normalized = (filePath.startsWith("@") ? filePath.slice(1) : filePath).replace(UNICODE_SPACES, " ");
  if (normalized === "~") return homedir();
  if (normalized.startsWith("~/")) return homedir() + normalized.slice(1);
  return normalized;
}

/** pi's `resolveToCwd` (write, edit, ls, grep, find). */
export function piResolveToCwd(filePath: string, cwd: string): string {
  const expanded = piExpandPath(filePath);
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/** pi's `resolveReadPath` (read): the resolved path, or the first macOS spelling of it that exists. */
export function piResolveReadPath(filePath: string, cwd: string): string {
  const resolved = piResolveToCwd(filePath, cwd);
  if (exists(resolved)) return resolved;
  const amPm = resolved.replace(/ (AM|PM)\./gi, "\u202F$1.");
  if (amPm !== resolved && exists(amPm)) return amPm;
  const nfd = resolved.normalize("NFD");
  if (nfd !== resolved && exists(nfd)) return nfd;
  const curly = resolved.replace(/'/g, "\u2019");
  if (curly !== resolved && exists(curly)) return curly;
  const nfdCurly = nfd.replace(/'/g, "\u2019");
  if (nfdCurly !== resolved && exists(nfdCurly)) return nfdCurly;
  return resolved;
}

function exists(path: string): boolean {
  try {
    accessSync(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path the kernel ends up at for an absolute path: symlinks followed (dangling ones too), `..`
 * applied after them, missing components kept as written. Undefined for a symlink loop.
 */
export function physicalPath(absolute: string): string | undefined {
  // A stack of components still to walk; the next one is on top.
  const pending = absolute.split("/").reverse();
  let current = "/";
  let links = 0;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = dirname(current);
      continue;
    }
    const next = current === "/" ? `/${part}` : `${current}/${part}`;
    const link = symlinkTarget(next);
    if (link === undefined) {
      current = next;
      continue;
    }
    if (++links > MAX_LINKS) return undefined;
    pending.push(...link.split("/").reverse());
    if (link.startsWith("/")) current = "/";
  }
  return current;
}

function symlinkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined; // missing (or not a folder): write creates it as a plain file or folder
  }
}

/** Tools whose `path` names a file or folder, and whether they change it. */
const PATH_TOOLS: Record<string, { writes: boolean }> = {
  read: { writes: false },
  ls: { writes: false },
  grep: { writes: false },
  find: { writes: false },
  write: { writes: true },
  edit: { writes: true },
};

export interface ToolTarget {
  /** What the model wrote. */
  requested: string;
  /** Where the tool goes on disk (after pi's resolution and every symlink); undefined for a loop. */
  physical: string | undefined;
  /** `~`, `~user`: a home folder, whatever pi makes of it. */
  home: boolean;
  writes: boolean;
}

/**
 * The target of a file tool call, or undefined for a tool without a path. A missing or empty `path`
 * means the workspace itself (pi's `path || "."`). A path that is not a string or holds a NUL byte has
 * `physical` undefined: pi would fail on it, the guard refuses it.
 */
export function toolTarget(toolName: string, input: unknown, workspaceDir: string): ToolTarget | undefined {
  const tool = PATH_TOOLS[toolName];
  if (!tool) return undefined;
  const raw = (input as { path?: unknown } | null | undefined)?.path;
  if (raw !== undefined && raw !== null && typeof raw !== "string")
    return { requested: String(raw), physical: undefined, home: false, writes: tool.writes };
  const requested = raw || ".";
  if (requested.includes("\0")) return { requested, physical: undefined, home: false, writes: tool.writes };
  const home = (requested.startsWith("@") ? requested.slice(1) : requested)
    .replace(UNICODE_SPACES, " ")
    .startsWith("~");
  const resolved =
    toolName === "read"
      ? piResolveReadPath(requested, workspaceDir)
      : piResolveToCwd(requested, workspaceDir);
  return { requested, physical: physicalPath(resolved), home, writes: tool.writes };
}

/** Where a physical path lies relative to the workspace: outside, inside, or inside its `.pi` folder. */
export function placeIn(workspaceDir: string, physical: string): "outside" | "inside" | "pi-config" {
  const root = realpathSync(workspaceDir);
  if (physical === root) return "inside";
  if (!physical.startsWith(`${root}/`)) return "outside";
  const first = physical.slice(root.length + 1).split("/")[0] ?? "";
  // Case-insensitive: on macOS `.PI/extensions` is the same folder as `.pi/extensions`.
  return first.toLowerCase() === ".pi" ? "pi-config" : "inside";
}
