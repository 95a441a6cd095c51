/**
 * `bun server/main.ts index ...`: builds an index the server then searches; re-runs skip unchanged files;
 * binary files are skipped with a warning; a path that does not exist or holds no text stops it loudly.
 * With ATRIUM_TEST_DATABASE=postgres the command gets APP_DATABASE_URL (a fresh database), as a server
 * on PostgreSQL would, and the rows are read there.
 */

import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDb } from "../../server/storage/db/open.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { cleanEnv, finished, MAIN, spawn } from "../helpers/server.ts";
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

const databaseUrl =
  process.env.ATRIUM_TEST_DATABASE === "postgres" ? await freshPostgresDatabase() : undefined;
const databaseEnv: Record<string, string> = databaseUrl ? { APP_DATABASE_URL: databaseUrl } : {};
const run = (args: string[]) => finished(spawn(["index", ...args], { env: databaseEnv }));

/** Rows of the data dir's database (app.db, or the PostgreSQL database the command was given). */
async function rows<T>(dataDir: string, sql: string): Promise<T[]> {
  const db = openDb({ url: databaseUrl, dataDir });
  try {
    return await db.all<T>(sql);
  } finally {
    await db.close();
  }
}

test("indexes a directory with per-phase progress and a summary; a re-run does nothing", async () => {
  const first = await run([corpus, "--name", "carol", "--data-dir", data]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('index "carol"');
  expect(first.stdout).toMatch(/documents\s+1 \(1 indexed, 0 unchanged\)/);
  for (const field of ["units", "entities", "relationships", "communities", "reports", "seconds"])
    expect(first.stdout).toMatch(new RegExp(`${field}\\s+\\d`));
  expect(first.stdout).toMatch(/modularity level 0: 0\.\d+/);
  // Each phase's count names what it counts.
  const counts = {
    units: "documents",
    extraction: "text units",
    communities: "graph",
    reports: "communities",
  };
  for (const [phase, what] of Object.entries(counts))
    expect(first.stderr).toMatch(new RegExp(`^${phase}: \\d+/\\d+ ${what}$`, "m"));
  expect(first.stderr).toContain("units: 1/1 documents");
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

test("a path that does not exist: non-zero exit, a message naming it, and no index or database", async () => {
  const fresh = join(dir.path, "fresh-data");
  const missing = join(dir.path, "no-such-corpus");
  const result = await run([missing, "--name", "typo", "--data-dir", fresh]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`atrium index: ${missing}: no such file or directory`);
  expect(result.stderr).toContain("nothing was indexed");
  expect(result.stdout).toBe("");
  expect(existsSync(join(fresh, "app.db"))).toBe(false);
  // One missing path among good ones stops the run too: nothing half-indexed.
  const mixed = await run([corpus, missing, "--name", "typo", "--data-dir", data]);
  expect(mixed.code).toBe(1);
  const names = await rows<{ name: string }>(data, "SELECT name FROM search_indexes");
  expect(names.map((row) => row.name)).toContain("carol");
  expect(names.map((row) => row.name)).not.toContain("typo");
});

test("paths with no text document in them: non-zero exit, no index", async () => {
  const empty = join(dir.path, "only-binary");
  mkdirSync(empty);
  writeFileSync(join(empty, "image.md"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
  const fresh = join(dir.path, "fresh-data-2");
  const result = await run([empty, "--data-dir", fresh]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("no documents (.txt, .text, .md, .markdown, .html, .htm, .xhtml, .pdf)");
  expect(result.stderr).toMatch(/image\.md: .*binary/);
  expect(existsSync(join(fresh, "app.db"))).toBe(false);
});

test("on a terminal each progress bar names what it counts", async () => {
  // util-linux's `script` gives the command a terminal, as a user running it by hand has.
  const command = [
    process.execPath,
    MAIN,
    "index",
    corpus,
    "--name",
    "tty",
    "--data-dir",
    join(dir.path, "tty"),
  ];
  const proc = Bun.spawn(["script", "-qec", command.map((arg) => `'${arg}'`).join(" "), "/dev/null"], {
    cwd: REPO_ROOT,
    env: cleanEnv(databaseEnv),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
  expect(code).toBe(0);
  expect(out).toContain("|"); // a bar, not the plain lines of a pipe
  for (const [phase, what] of [
    ["units", "documents"],
    ["extraction", "text units"],
    ["communities", "graph"],
    ["reports", "communities"],
  ])
    expect(out).toMatch(new RegExp(`${phase} +\\|[^|]+\\| \\d+/\\d+ ${what}`));
});

test("--list shows an index's documents and --remove takes one out without a rebuild", async () => {
  const two = join(dir.path, "two");
  mkdirSync(two);
  copyFileSync(join(FIXTURES, "stave-one.txt"), join(two, "stave-one.txt"));
  copyFileSync(join(FIXTURES, "stave-three.txt"), join(two, "stave-three.txt"));
  expect((await run([two, "--name", "two", "--data-dir", data])).code).toBe(0);
  const listed = await run(["--list", "--name", "two", "--data-dir", data]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(/^stave-one\.txt\t\d+ chars\t\d+ units\nstave-three\.txt\t/);

  const unknown = await run(["--remove", "nope.txt", "--name", "two", "--data-dir", data]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('"two" has no document "nope.txt"');
  const removed = await run(["--remove", "stave-three.txt", "--name", "two", "--data-dir", data]);
  expect(removed.code).toBe(0);
  expect(removed.stdout).toMatch(/documents\s+1 \(0 indexed, 0 unchanged, 1 removed\)/);
  const titles = await rows<{ title: string }>(data, "SELECT title FROM search_documents ORDER BY title");
  expect(titles.map((r) => r.title)).not.toContain("stave-three.txt");
  expect((await run(["--list", "--name", "two", "--data-dir", data])).stdout).not.toContain(
    "stave-three.txt",
  );
  expect((await run(["--remove", "x", corpus, "--data-dir", data])).code).toBe(2);
}, 120_000);
