/**
 * Comments and docs cite what the repository holds. "The spec" and "the origin" named documents and a
 * client that are not in it; what they meant is written down in docs/glossary.md as the reference
 * contract (each family's page, schemas/, the OpenAPI document) and the reference client. This test keeps
 * the old words from coming back, across a line break too (this file, which names them, aside). The HTTP
 * Origin header keeps its name.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./helpers/app.ts";

const FOLDERS = ["server", "web", "cli", "schemas", "common", "tests", "bench", "scripts", "docs"];
// Built from parts so this file does not match itself.
const SPEC = new RegExp(`\\b[Tt]he(?:\\s|\\*|//)+(?:(?:chat|turns|search|agents) )?${"spe"}c(?:'s)?\\b`);
const ORIGIN = new RegExp(
  `\\b[Tt]he(?:\\s|\\*|//)+${"orig"}in(?:'s\\b| (?:web|client|does|sends|listed)\\b)`,
);

function repositoryFiles(): string[] {
  const listed = Bun.spawnSync(["git", "ls-files", ...FOLDERS, "README.md"], { cwd: REPO_ROOT });
  return new TextDecoder()
    .decode(listed.stdout)
    .split("\n")
    .filter((path) => /\.(ts|tsx|md)$/.test(path) && path !== "tests/vocabulary.test.ts");
}

test("no comment or doc cites 'the spec' or 'the origin': they name the reference contract or client", () => {
  const files = repositoryFiles();
  expect(files.length).toBeGreaterThan(100);
  const found = files.filter((path) => {
    const text = readFileSync(join(REPO_ROOT, path), "utf8");
    return SPEC.test(text) || ORIGIN.test(text);
  });
  expect(found).toEqual([]);
});

test("the check recognises the old words and leaves the Origin header alone", () => {
  expect(SPEC.test(`as the chat ${"spe"}c's texts say`)).toBe(true);
  expect(SPEC.test(`the\n * ${"spe"}c gives`)).toBe(true);
  expect(ORIGIN.test(`what the ${"orig"}in's client sends`)).toBe(true);
  expect(ORIGIN.test(`as the ${"orig"}in does`)).toBe(true);
  expect(ORIGIN.test("refused by the Origin check")).toBe(false);
  expect(ORIGIN.test(`naming the ${"orig"}in you use`)).toBe(false);
});
