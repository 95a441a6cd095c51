/**
 * The agent workspace contract: `agent-workspace/` inside the owner's one workspace folder (beside the
 * turns family's `files/`), its manifest, sections, required folders and policy files, and canonical
 * paths (`agent-workspace/<relative path>`, the form every route answers and takes). The layout follows
 * the origin web app's contract (version 1), with Atrium's own `generatedBy`.
 *
 * `bootstrap` creates what is missing and never overwrites a file (exclusive create); `health` runs it
 * and reports what it found: manifest version and validity, missing canonical paths, projection state.
 * Its creates and reads go through `Beneath` (openat2, anchored at the workspace folder): the sandbox
 * owns this folder and may swap a checked folder for a symlink at any time.
 */
import { existsSync, lstatSync, mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Beneath } from "../../workspace/beneath.ts";
import { ownerFolders } from "../../workspace/owner-folders.ts";

export const WORKSPACE_DIR = "agent-workspace";
export const CONTRACT_VERSION = 1;

export const SECTIONS = [
  { name: "instructions", kind: "canonical" },
  { name: "system", kind: "canonical" },
  { name: "memory", kind: "canonical" },
  { name: "plans", kind: "canonical" },
  { name: "skills", kind: "canonical" },
  { name: "evals", kind: "canonical" },
  { name: "artifacts", kind: "canonical" },
  { name: "pi", kind: "canonical" },
  { name: "scratch", kind: "temporary" },
  { name: "indexes", kind: "projection" },
] as const;

export const ROOT_FILES = ["manifest.json", "README.md", "AGENTS.md", "ARCHITECTURE.md", "index.md"];

const DIRECTORIES = [
  "memory/daily",
  "memory/project",
  "memory/research",
  "plans/active",
  "plans/completed",
  "plans/abandoned",
  "artifacts/reports",
  "artifacts/datasets",
  "artifacts/traces",
  "artifacts/diagrams",
  "scratch/tmp",
  "pi/skills",
  "pi/prompts",
  "pi/extensions",
  "pi/extensions/enabled",
  "pi/extensions/staged",
  "pi/packages",
];

const POLICIES = [
  {
    key: "workspace-policy",
    path: "system/workspace-policy.md",
    seed: "# Workspace policy\n\nCanonical files are the source of truth; indexes/ is a rebuildable projection.\n",
  },
  {
    key: "tool-policy",
    path: "system/tool-policy.md",
    seed: "# Tool policy\n\nPrefer reading before writing; keep edits small and explained.\n",
  },
  {
    key: "self-improvement-policy",
    path: "system/self-improvement-policy.md",
    seed: "# Self-improvement policy\n\nRecord lessons in memory/ with the evidence that taught them.\n",
  },
  {
    key: "constraints",
    path: "system/constraints.md",
    seed: "# Constraints\n\nNo secrets in the workspace.\n",
  },
];
const SCRATCH_GUARD = "scratch/tmp/.gitkeep";

export const canonical = (relative: string) => (relative ? `${WORKSPACE_DIR}/${relative}` : WORKSPACE_DIR);

export function manifest() {
  return {
    version: CONTRACT_VERSION,
    generatedBy: "atrium",
    workspaceRoot: WORKSPACE_DIR,
    sections: SECTIONS.map((s) => ({ name: s.name, path: canonical(s.name), kind: s.kind })),
    policies: POLICIES.map((p) => ({ key: p.key, path: canonical(p.path) })),
    scratch: { path: canonical("scratch"), temporary: true, protectionPaths: [canonical(SCRATCH_GUARD)] },
    projection: { path: canonical("indexes"), canonical: false },
  };
}

/** The absolute folder of an owner's agent workspace. */
export function workspaceRoot(dataDir: string, owner: string): string {
  return join(ownerFolders(dataDir, owner).workspace, WORKSPACE_DIR);
}

export interface Bootstrap {
  created: string[];
  missing: string[];
  manifest: { exists: boolean; valid: boolean; version: number | null };
}

/** Creates what is missing (folders, manifest, policy seeds); never overwrites; reports the rest. */
export function bootstrap(root: string): Bootstrap {
  const created: string[] = [];
  const missing: string[] = [];
  // The workspace folder (the jail cannot rename it) is the anchor; everything below is checked again
  // by the kernel at each create, so a symlink planted after the check below fails the create.
  mkdirSync(dirname(root), { recursive: true });
  const fs = new Beneath(dirname(root));
  const below = (relative: string) => (relative ? `${basename(root)}/${relative}` : basename(root));
  const dir = (relative: string) => {
    const path = relative ? join(root, relative) : root;
    if (!realParents(root, relative)) return void missing.push(canonical(relative));
    if (isDir(path)) return;
    if (existsSync(path) || isLink(path)) return void missing.push(canonical(relative));
    try {
      fs.mkdir(below(relative));
      created.push(canonical(relative));
    } catch {
      missing.push(canonical(relative));
    }
  };
  const file = (relative: string, text: string) => {
    const path = join(root, relative);
    if (!realParents(root, relative)) return void missing.push(canonical(relative));
    if (isFile(path)) return;
    if (existsSync(path) || isLink(path)) return void missing.push(canonical(relative));
    try {
      fs.createFile(below(relative), text);
      created.push(canonical(relative));
    } catch {
      missing.push(canonical(relative));
    }
  };
  dir("");
  for (const section of SECTIONS) dir(section.name);
  for (const relative of DIRECTORIES) dir(relative);
  file("manifest.json", `${JSON.stringify(manifest(), null, 2)}\n`);
  for (const policy of POLICIES) file(policy.path, policy.seed);
  file(SCRATCH_GUARD, "");
  return { created, missing, manifest: readManifest(fs, below("manifest.json")) };
}

/**
 * Whether every folder from the workspace root down to `relative`'s parent is a real directory (no
 * symlink): only then do creates under it stay inside the workspace. The root's own parents are the
 * data dir's, which the server made.
 */
export function realParents(root: string, relative: string): boolean {
  if (isLink(root) || (existsSync(root) && !isDir(root))) return false;
  const parts = relative.split("/").filter(Boolean);
  let path = root;
  for (const part of parts.slice(0, -1)) {
    path = join(path, part);
    if (!isDir(path)) return false;
  }
  return true;
}

function readManifest(fs: Beneath, relative: string): Bootstrap["manifest"] {
  let bytes: Buffer | undefined;
  try {
    bytes = fs.stat(relative)?.isFile() ? fs.readFile(relative) : undefined;
  } catch {}
  if (!bytes) return { exists: false, valid: false, version: null };
  try {
    const parsed = JSON.parse(bytes.toString("utf8")) as {
      version?: unknown;
      workspaceRoot?: unknown;
      sections?: unknown;
    };
    const version = typeof parsed.version === "number" ? parsed.version : null;
    const valid =
      version === CONTRACT_VERSION &&
      parsed.workspaceRoot === WORKSPACE_DIR &&
      Array.isArray(parsed.sections);
    return { exists: true, valid, version };
  } catch {
    return { exists: true, valid: false, version: null };
  }
}

const stat = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};
const isDir = (path: string) => stat(path)?.isDirectory() === true;
const isFile = (path: string) => stat(path)?.isFile() === true;
const isLink = (path: string) => stat(path)?.isSymbolicLink() === true;
