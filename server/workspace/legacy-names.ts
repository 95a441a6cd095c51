/**
 * The folder names earlier builds gave an owner, for the startup migration (migrate-folders.ts) only:
 *   - turns (`workspaces/`, `attachments/`, `artifacts/`): `encodeURIComponent(owner)`, which left `.`,
 *     `..` and `*'()!~` as they are (so `..` named the parent folder) and differed from chat's name;
 *   - chat before the `=<sha256>` form (`sessions/`, `workspaces/`, `pi-agent/`): a safe id as it is,
 *     else `x` + the id's UTF-8 hex cut to 120 digits (ids sharing 60 bytes shared a folder).
 * Chat's `=<sha256>` form is today's name (owner-folders.ts), so it needs no move.
 */
import type { OwnerRoot } from "./owner-folders.ts";
import { ownerFolderName } from "./owner-folders.ts";

// Frozen copies of what those builds did: today's rules (owner-folders.ts) may change, these may not.
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const TURNS_ROOTS: readonly OwnerRoot[] = ["workspaces", "attachments", "artifacts"];
const CHAT_ROOTS: readonly OwnerRoot[] = ["workspaces", "sessions", "pi-agent"];
const HEX_DIGITS = 120;

export function turnsLegacyName(owner: string): string | undefined {
  try {
    return encodeURIComponent(owner);
  } catch {
    return undefined; // a lone surrogate: that build answered 500 and wrote nothing
  }
}

export function chatHexLegacyName(owner: string): string {
  return SAFE_ID.test(owner) ? owner : `x${Buffer.from(owner).toString("hex").slice(0, HEX_DIGITS)}`;
}

/** A name that was one folder below its root (not the root itself, its parent, or a deeper path). */
function isSegment(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}

/** Old names of `owner`'s folder under `root` that differ from today's name. */
export function legacyFolderNames(owner: string, root: OwnerRoot): string[] {
  const names = new Set<string>();
  if (TURNS_ROOTS.includes(root)) {
    const name = turnsLegacyName(owner);
    if (name !== undefined) names.add(name);
  }
  if (CHAT_ROOTS.includes(root)) names.add(chatHexLegacyName(owner));
  const today = ownerFolderName(owner);
  return [...names].filter((name) => name !== today && isSegment(name));
}

/**
 * The owner an old folder name stands for when no database row names one (a turns Files API user
 * without sessions, say): undefined when the name cannot be read back. Chat's hex names are read only
 * when uncut; a name that reads both ways in `workspaces/` is taken as chat's (its `x` + hex form).
 */
export function ownerFromLegacyName(name: string, root: OwnerRoot): string | undefined {
  const hex = /^x((?:[0-9a-f]{2})*)$/.exec(name);
  if (hex?.[1] !== undefined && hex[1].length < HEX_DIGITS && CHAT_ROOTS.includes(root)) {
    const owner = Buffer.from(hex[1], "hex").toString("utf8");
    if (chatHexLegacyName(owner) === name) return owner;
  }
  if (!TURNS_ROOTS.includes(root)) return undefined;
  try {
    const owner = decodeURIComponent(name);
    return turnsLegacyName(owner) === name ? owner : undefined;
  } catch {
    return undefined;
  }
}
