/**
 * Where an owner's things live in the data dir: the one function every family asks (chat, turns).
 *
 *   workspaces/<folder>/         the owner's one workspace: chat's agent working directory (the project
 *                                dir pi sees) and the turns volume, whose Files API namespace is `files/`
 *   sessions/<folder>/           pi session files (chat transcripts, `*.jsonl`)
 *   pi-agent/<folder>/           pi's agent dir: settings.json, models.json, skills, prompts, extensions
 *   attachments/<folder>/<id>    turns attachment bytes
 *   artifacts/<folder>/<id>      turns artifact bytes
 *
 * `<folder>` is `ownerFolderName(owner)`: one path segment, and a different one for every owner id.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

/** The folders under the data dir that hold one sub-folder per owner. */
export const OWNER_ROOTS = ["workspaces", "sessions", "pi-agent", "attachments", "artifacts"] as const;
export type OwnerRoot = (typeof OWNER_ROOTS)[number];

/** Owner ids that are their own folder name (so `local` stays `local`). */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const HASHED_NAME = /^=[0-9a-f]{64}$/;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The folder name of an owner. A safe id is used as it is; any other id becomes `=` and the SHA-256 of
 * the whole id. Injective: two safe ids differ as strings; two hashed ones differ unless SHA-256
 * collides; and `=` cannot start a safe id, so the two forms never meet. Either form is one segment of
 * at most 65 characters from `[A-Za-z0-9_=-]`: never empty, `.`, `..`, a separator or NUL, whatever the
 * id holds (`..`, `/`, NUL, unicode, a lone surrogate, a megabyte).
 */
export function ownerFolderName(owner: string): string {
  // A typed string at compile time may still be undefined at run time (an anonymous public route):
  // refuse rather than name a folder "undefined".
  if (typeof owner !== "string") throw new TypeError("owner id must be a string");
  if (SAFE_ID.test(owner)) return owner;
  return `=${createHash("sha256").update(idBytes(owner)).digest("hex")}`;
}

/**
 * The bytes hashed: UTF-8, except for an id with a lone surrogate (a JSON string may carry one), which
 * UTF-8 would turn into U+FFFD and so into another id's bytes. Those hash 0xFF and their UTF-16 code
 * units instead; 0xFF never occurs in UTF-8, so the two forms cannot produce the same bytes.
 */
function idBytes(owner: string): Uint8Array {
  if (!LONE_SURROGATE.test(owner)) return Buffer.from(owner, "utf8");
  return Buffer.concat([Buffer.from([0xff]), Buffer.from(owner, "utf16le")]);
}

/** Whether a folder name is today's form of a non-safe id (`=` + SHA-256), which no old build wrote. */
export function isHashedFolderName(name: string): boolean {
  return HASHED_NAME.test(name);
}

export interface OwnerFolders {
  /** workspaces/<folder>: the agent's working directory and the mounted turns volume. */
  workspace: string;
  /** workspaces/<folder>/files: the turns Files API namespace, inside the workspace. */
  files: string;
  /** sessions/<folder>: pi session files. */
  sessions: string;
  /** pi-agent/<folder>: pi's agent dir. */
  piAgent: string;
  /** attachments/<folder>: turns attachment bytes, one file per attachment id. */
  attachments: string;
  /** artifacts/<folder>: turns artifact bytes, one file per artifact id. */
  artifacts: string;
}

/** Every per-owner folder of `owner` under `dataDir` (paths only: nothing is created). */
export function ownerFolders(dataDir: string, owner: string): OwnerFolders {
  return ownerFoldersByName(dataDir, ownerFolderName(owner));
}

/** The same folders from the owner's folder name (the last segment of any of them). */
export function ownerFoldersByName(dataDir: string, name: string): OwnerFolders {
  const workspace = join(dataDir, "workspaces", name);
  return {
    workspace,
    files: join(workspace, "files"),
    sessions: join(dataDir, "sessions", name),
    piAgent: join(dataDir, "pi-agent", name),
    attachments: join(dataDir, "attachments", name),
    artifacts: join(dataDir, "artifacts", name),
  };
}
