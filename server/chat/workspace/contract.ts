/**
 * The agent workspace contract: `agent-workspace/` inside the owner's one workspace folder (beside the
 * turns family's `files/`), its manifest, sections, required folders and policy files, and canonical
 * paths (`agent-workspace/<relative path>`, the form every route answers and takes). The layout follows
 * the reference client's contract (version 1), with Atrium's own `generatedBy`.
 *
 * `bootstrap` creates what is missing and never overwrites a file (exclusive create); `health` runs it
 * and reports what it found: manifest version and validity, missing canonical paths, projection state.
 * The folder is opened once per request beneath the owner's workspace folder (`openAgentWorkspace`),
 * and its checks, creates and reads go through that descriptor (`Beneath`, openat2): the sandbox owns
 * this folder and may swap any folder in it for a symlink at any time.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
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
/** The manifest is a few hundred bytes; a bigger one is not read (it reads as invalid). */
const MANIFEST_MAX_BYTES = 64 * 1024;

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

/**
 * The agent workspace folder (`root`, `<workspace folder>/agent-workspace`), created where missing and
 * opened once beneath the owner's workspace folder (which the sandbox cannot rename), with no symlink
 * on the way: everything a request does then resolves beneath that descriptor. The caller closes it.
 * Throws (ELOOP, ENOTDIR) when the sandbox put something else than a folder under that name.
 */
export function openAgentWorkspace(root: string): { aw: Beneath; createdRoot: boolean } {
  mkdirSync(dirname(root), { recursive: true });
  const folder = new Beneath(dirname(root));
  let createdRoot = false;
  if (!folder.stat(WORKSPACE_DIR)) {
    try {
      folder.mkdir(WORKSPACE_DIR);
      createdRoot = true;
    } catch {}
  }
  return { aw: folder.openDir(WORKSPACE_DIR), createdRoot };
}

/** Runs `use` on the opened agent workspace, bootstrapped first; closes it after. */
export function withAgentWorkspace<T>(root: string, use: (aw: Beneath, boot: Bootstrap) => T): T {
  const { aw, createdRoot } = openAgentWorkspace(root);
  try {
    return use(aw, bootstrapOpened(aw, createdRoot));
  } finally {
    aw.close();
  }
}

/** Creates what is missing (folders, manifest, policy seeds); never overwrites; reports the rest. */
export function bootstrap(root: string): Bootstrap {
  return withAgentWorkspace(root, (_aw, boot) => boot);
}

/**
 * Bootstrap beneath the opened folder: each check and each create is resolved by the kernel beneath
 * its descriptor with no symlink on the way, so a section the sandbox swapped for a symlink is reported
 * missing and nothing is created through it.
 */
function bootstrapOpened(aw: Beneath, createdRoot: boolean): Bootstrap {
  const created: string[] = createdRoot ? [canonical("")] : [];
  const missing: string[] = [];
  const kind = (relative: string) => {
    try {
      const stat = aw.stat(relative);
      return stat ? (stat.isDirectory() ? "dir" : stat.isFile() ? "file" : "other") : "none";
    } catch {
      return "unreachable"; // a symlink (or a file) on the way
    }
  };
  const dir = (relative: string) => {
    const found = kind(relative);
    if (found === "dir") return;
    if (found !== "none") return void missing.push(canonical(relative));
    try {
      aw.mkdir(relative);
      created.push(canonical(relative));
    } catch {
      missing.push(canonical(relative));
    }
  };
  const file = (relative: string, text: string) => {
    const found = kind(relative);
    if (found === "file") return;
    if (found !== "none") return void missing.push(canonical(relative));
    try {
      aw.createFile(relative, text);
      created.push(canonical(relative));
    } catch {
      missing.push(canonical(relative));
    }
  };
  for (const section of SECTIONS) dir(section.name);
  for (const relative of DIRECTORIES) dir(relative);
  file("manifest.json", `${JSON.stringify(manifest(), null, 2)}\n`);
  for (const policy of POLICIES) file(policy.path, policy.seed);
  file(SCRATCH_GUARD, "");
  return { created, missing, manifest: readManifest(aw, "manifest.json") };
}

function readManifest(fs: Beneath, relative: string): Bootstrap["manifest"] {
  let bytes: Buffer | undefined;
  try {
    bytes = fs.readFile(relative, MANIFEST_MAX_BYTES);
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
