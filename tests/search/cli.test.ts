/** `bun server/main.ts index ...`: builds an index the server then searches; re-runs skip unchanged files; binary files are skipped with a warning. */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { FIXTURES } from "./fixtures.ts";

const dir = tempDir();
afterAll(() => dir.remove());
const corpus = join(dir.path, "corpus");
const data = join(dir.path, "data");
mkdirSync(corpus);
copyFileSync(join(FIXTURES, "stave-one.txt"), join(corpus, "stave-one.txt"));
writeFileSync(join(corpus, "image.md"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
writeFileSync(join(corpus, "ignored.json"), "{}");

async function run(args: string[]) {
  const proc = spawn(["index", ...args]);
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, stdout, stderr };
}

test("indexes a directory with per-phase progress and a summary; a re-run does nothing", async () => {
  const first = await run([corpus, "--name", "carol", "--data-dir", data]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('index "carol"');
  expect(first.stdout).toMatch(/documents\s+1 \(1 indexed, 0 unchanged\)/);
  for (const field of ["units", "entities", "relationships", "communities", "reports", "seconds"])
    expect(first.stdout).toMatch(new RegExp(`${field}\\s+\\d`));
  expect(first.stdout).toMatch(/modularity level 0: 0\.\d+/);
  for (const phase of ["units", "extraction", "communities", "reports"])
    expect(first.stderr).toMatch(new RegExp(`^${phase}: \\d+/\\d+$`, "m"));
  expect(first.stderr).toContain("warning: image.md: skipped, binary content (NUL bytes)");
  expect(first.stderr).not.toContain("ignored.json");

  const second = await run([corpus, "--name", "carol", "--data-dir", data]);
  expect(second.code).toBe(0);
  expect(second.stdout).toMatch(/documents\s+1 \(0 indexed, 1 unchanged\)/);
  expect(second.stderr).not.toContain("communities:");
});

test("bad arguments exit 2 with usage", async () => {
  const none = await run(["--data-dir", data]);
  expect(none.code).toBe(2);
  expect(none.stderr).toContain("name at least one file or directory");
  const badName = await run([corpus, "--name", "../etc", "--data-dir", data]);
  expect(badName.code).toBe(2);
  const badModel = await run([corpus, "--model", "nope/none", "--data-dir", data]);
  expect(badModel.code).toBe(2);
  expect(badModel.stderr).toContain("Unknown provider 'nope'");
});
