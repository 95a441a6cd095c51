/**
 * The file-tool guard checks where pi's tools really go. Pinned three ways:
 * - the mirror of pi's path resolution equals pi's own functions (its `path-utils.js`, not exported,
 *   imported here by file) on generated strings, and equals the path pi's real tools hand to their
 *   file operations;
 * - named attacks (`@~/x`, `~user`, `@/abs`, `..`, NUL, Unicode spaces, symlinks out, dangling and
 *   looping symlinks, `..` after a symlink, `.pi/`) are refused;
 * - a property over generated paths: whenever the guard lets a call through, pi's real tool, run
 *   unguarded, touches and reveals nothing outside the workspace.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { workspaceFileTools } from "../../server/chat/runtime/file-tools.ts";
import { pathRefusal } from "../../server/chat/runtime/guard.ts";
import { piExpandPath, piResolveReadPath, piResolveToCwd } from "../../server/chat/runtime/tool-paths.ts";
import { loadPi } from "../../server/models/pi-sdk.ts";
import { tempDir } from "../helpers/tmp.ts";
import { buildFixture, type Fixture, TOKENS } from "./fixtures/tool-paths-fixture.ts";

interface PiPathUtils {
  expandPath(path: string): string;
  resolveToCwd(path: string, cwd: string): string;
  resolveReadPath(path: string, cwd: string): string;
}

const dir = tempDir();
let f: Fixture;
let ws: string;
let piPaths: PiPathUtils;
let pi: Awaited<ReturnType<typeof loadPi>>;

beforeAll(async () => {
  f = buildFixture(dir.path);
  ws = f.ws;
  pi = await loadPi();
  const entry = Bun.resolveSync("@mariozechner/pi-coding-agent", import.meta.dir);
  piPaths = (await import(join(dirname(entry), "core", "tools", "path-utils.js"))) as PiPathUtils;
});
afterAll(() => dir.remove());

/** Strings pi may receive: free text, and paths built from the tricky pieces above. */
const anyPath = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.array(fc.constantFrom(...TOKENS, "..", "/"), { maxLength: 6 }).map((parts) => parts.join("")),
  fc.array(fc.constantFrom(...TOKENS, ".."), { maxLength: 6 }).map((parts) => parts.join("/")),
);

test("the mirror equals pi's own path functions on generated strings", () => {
  fc.assert(
    fc.property(anyPath, fc.constantFrom("", "@", "/"), (path, prefix) => {
      const p = prefix + path;
      expect(piExpandPath(p)).toBe(piPaths.expandPath(p));
      expect(piResolveToCwd(p, ws)).toBe(piPaths.resolveToCwd(p, ws));
      expect(piResolveReadPath(p, ws)).toBe(piPaths.resolveReadPath(p, ws));
    }),
    { numRuns: 500 },
  );
  // The macOS spellings really are exercised.
  expect(piPaths.resolveReadPath("shot 1 PM.png", ws)).toBe(join(ws, "shot 1\u202FPM.png"));
  expect(piResolveReadPath("it's.txt", ws)).toBe(join(ws, "it\u2019s.txt"));
  expect(piResolveReadPath("café.txt", ws)).toBe(join(ws, "cafe\u0301.txt"));
});

/** The path pi's real tool passes to its file operations for `path` (the operations only record it). */
async function openedBy(tool: string, path: string): Promise<string | undefined> {
  let seen: string | undefined;
  const stop = (p: string) => {
    seen ??= p;
    throw new Error("recorded");
  };
  // biome-ignore lint/suspicious/noExplicitAny: pi's tools differ in their parameter schemas
  const definitions: Record<string, () => ToolDefinition<any, any, any>> = {
    read: () =>
      pi.createReadToolDefinition(ws, { operations: { access: async (p) => stop(p), readFile: stop } }),
    write: () =>
      pi.createWriteToolDefinition(ws, { operations: { mkdir: async (p) => void p, writeFile: stop } }),
    edit: () =>
      pi.createEditToolDefinition(ws, {
        operations: { access: async (p) => stop(p), readFile: stop, writeFile: stop },
      }),
    ls: () => pi.createLsToolDefinition(ws, { operations: { exists: stop, stat: stop, readdir: stop } }),
    find: () => pi.createFindToolDefinition(ws, { operations: { exists: stop, glob: () => [] } }),
  };
  const args = { path, content: "x", pattern: "*", edits: [{ oldText: "a", newText: "b" }] };
  await definitions[tool]?.()
    .execute("call", args, undefined, undefined, undefined as never)
    .catch(() => {});
  return seen;
}

test("pi's real tools open exactly the path the mirror computes", async () => {
  await fc.assert(
    fc.asyncProperty(anyPath, fc.constantFrom("read", "write", "edit", "ls", "find"), async (path, tool) => {
      if (path.includes("\0")) return;
      const expected = tool === "read" ? piResolveReadPath(path, ws) : piResolveToCwd(path || ".", ws);
      expect({ path, tool, opened: await openedBy(tool, path) }).toEqual({ path, tool, opened: expected });
    }),
    { numRuns: 300 },
  );
});

test("named attacks are refused; plain workspace paths are not", () => {
  const refused: [string, string][] = [
    ["read", "@~/x"],
    ["write", "@~/x"],
    ["ls", "@~"],
    ["ls", "~"],
    ["read", "~/.ssh/id_rsa"],
    ["read", "~root/.bashrc"],
    ["read", "@~root"],
    ["read", "~\u00A0/x"],
    ["grep", "@~"],
    ["find", "~"],
    ["read", "@/etc/passwd"],
    ["read", "/etc/passwd"],
    ["ls", "@/"],
    ["read", "../../../o1/o2/outside/secret.txt"],
    ["read", `${ws}/../x`],
    ["read", "x.txt\0"],
    ["read", "out/secret.txt"],
    ["ls", "out"],
    ["grep", "out"],
    ["find", "@out"],
    ["read", "secretlink"],
    ["write", "dangle/x.txt"],
    ["write", "dangle-file"],
    ["read", "loop/x"],
    // `..` after a symlink goes up from the symlink's target, as the kernel does with an absolute path.
    ["read", `${ws}/sub/updir/../x.txt`],
    ["write", ".pi/extensions/x.ts"],
    ["edit", ".pi/settings.json"],
    ["write", ".PI/extensions/x.ts"],
    ["write", `${ws}/.pi/x`],
    ["write", "sub/../.pi/x"],
    ["write", "in/../.pi/x"],
  ];
  for (const [tool, path] of refused)
    expect({ tool, path, refused: pathRefusal(ws, tool, { path }) !== undefined }).toEqual({
      tool,
      path,
      refused: true,
    });
  const allowed: [string, string | undefined][] = [
    ["read", "x.txt"],
    ["read", "@x.txt"],
    ["read", `${ws}/x.txt`],
    ["read", "in/secret.txt"],
    ["read", "sub/../x.txt"],
    ["read", "sub/updir/../../x.txt"], // relative: pi normalises it before the kernel sees it
    ["ls", undefined],
    ["ls", ""],
    ["grep", "sub"],
    ["write", "new/deeper/file.txt"],
    ["read", ".pi/extensions"],
    ["read", "@\u2003~/x"], // pi makes this a folder named " ~" in the workspace
    ["ls", ".pi"],
  ];
  for (const [tool, path] of allowed)
    expect({ tool, path, reason: pathRefusal(ws, tool, { path }) }).toEqual({
      tool,
      path,
      reason: undefined,
    });
});

test("property: when the guard lets a call through, pi's real tool stays inside the workspace", async () => {
  // In a child process whose home is the fixture's (pi expands `~` with the home fixed at start), so
  // even a broken guard could only write inside the fixture, where the property sees it.
  const child = Bun.spawn(
    [process.execPath, join(import.meta.dir, "fixtures", "tool-paths-property.ts"), f.root],
    {
      // No transpiler cache: Bun would write it under HOME, which the property watches.
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: f.home,
        BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  expect({ code, err: err.slice(0, 2000) }).toEqual({ code: 0, err: "" });
  const { allowed, runs } = JSON.parse(out) as { allowed: number; runs: number };
  expect(runs).toBe(1000);
  expect(allowed).toBeGreaterThan(200); // not vacuous: many calls really ran
  expect(readFileSync(join(f.outside, "secret.txt"), "utf8")).toBe("OUTSIDE-SECRET");
}, 60_000);

test("each file tool checks its path again when it runs (after the hook), and refuses there too", async () => {
  const settings = pi.SettingsManager.inMemory();
  const tools = Object.fromEntries((await workspaceFileTools(ws, settings)).map((t) => [t.name, t]));
  expect(Object.keys(tools).sort()).toEqual(["edit", "find", "grep", "ls", "read", "write"]);
  for (const [name, args] of [
    ["read", { path: "out/secret.txt" }],
    ["write", { path: ".pi/extensions/x.ts", content: "x" }],
    ["edit", { path: "secretlink", edits: [{ oldText: "O", newText: "X" }] }],
    ["ls", { path: "@~" }],
    ["grep", { pattern: "x", path: "out" }],
    ["find", { pattern: "*", path: "~" }],
  ] as const) {
    const run = tools[name]?.execute("call", args, undefined, undefined, undefined as never);
    await expect(run).rejects.toThrow(/outside your workspace|in \.pi\//);
  }
  // (a file of its own: the property's writes may have changed the fixture's)
  writeFileSync(join(ws, "fresh.txt"), "inside and fresh");
  const ok = await tools.read?.execute(
    "call",
    { path: "fresh.txt" },
    undefined,
    undefined,
    undefined as never,
  );
  expect(JSON.stringify(ok)).toContain("inside and fresh");
  expect(readFileSync(join(f.outside, "secret.txt"), "utf8")).toBe("OUTSIDE-SECRET");
});
