/** Repository rules a clean clone depends on: one lockfile, CI runs the README's test command, no Electron download. */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./helpers/app.ts";

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

test("exactly one lockfile: npm's", () => {
  expect(existsSync(join(REPO_ROOT, "package-lock.json"))).toBe(true);
  for (const other of ["bun.lock", "bun.lockb", "yarn.lock", "pnpm-lock.yaml"])
    expect(existsSync(join(REPO_ROOT, other))).toBe(false);
});

test(".ci/run calls exactly the README's test command", () => {
  const readme = read("README.md");
  // The quick start's second command: the line right after the start command.
  const command = readme.match(/^npm install && npm start\n(.+)$/m)?.[1];
  expect(command).toBe("npm test");
  const ci = read(".ci/run")
    .split("\n")
    .map((line) => line.trim());
  expect(ci.at(-1) === "" ? ci.at(-2) : ci.at(-1)).toBe(command);
});

test("the default install needs nothing outside the npm registry", () => {
  const pkg = JSON.parse(read("package.json"));
  const all = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies };
  // Electron's install script downloads its binary from GitHub.
  expect(Object.keys(all).filter((name) => name === "electron" || name.startsWith("electron-"))).toEqual([]);
  expect(Object.keys(all)).toContain("bun");
  const lock = JSON.parse(read("package-lock.json"));
  for (const [path, entry] of Object.entries<{ resolved?: string }>(lock.packages)) {
    if (entry.resolved)
      expect({ path, resolved: entry.resolved.startsWith("https://registry.npmjs.org/") }).toEqual({
        path,
        resolved: true,
      });
  }
});

const INSPECTOR = "node_modules/@modelcontextprotocol/inspector";

test("the engines field is true for every installed package, and the README names it", () => {
  const range: string = JSON.parse(read("package.json")).engines.node;
  // The lowest version of each range the field admits, and the Node running this test.
  const floors = [...range.matchAll(/(\d+)(?:\.(\d+))?(?:\.(\d+))?/g)].map(
    (m) => `${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}`,
  );
  expect(floors.length).toBeGreaterThan(0);
  const versions = [...floors, process.versions.node];
  for (const version of versions)
    expect({ version, ok: Bun.semver.satisfies(version, range) }).toEqual({ version, ok: true });
  const lock = JSON.parse(read("package-lock.json"));
  for (const [path, entry] of Object.entries<{ engines?: { node?: string }; dev?: boolean }>(lock.packages)) {
    const wanted = entry.engines?.node;
    if (!path || !wanted) continue;
    // The one exception, named in the README: the MCP inspector (tests drive its CLI unchanged) asks for
    // Node 22.19 in every version; it is a dev dependency only, and works on the Node 20 that runs CI.
    if (path.startsWith(INSPECTOR)) {
      expect({ path, dev: entry.dev }).toEqual({ path, dev: true });
      continue;
    }
    for (const version of versions)
      expect({ path, version, ok: Bun.semver.satisfies(version, wanted) }).toEqual({
        path,
        version,
        ok: true,
      });
  }
  expect(read("README.md")).toContain(`\`${range}\``);
  expect(read("README.md")).toContain("@modelcontextprotocol/inspector");
});
