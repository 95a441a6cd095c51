/**
 * The docs stay navigable from a clone: every relative link in README.md and docs/ resolves to a file in
 * the repository, every `#anchor` to a heading of its page (GitHub's heading ids), and no file links or
 * points outside the repository (the docs must say what a reader needs themselves).
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";

const docsDir = join(REPO_ROOT, "docs");
/** README, docs/ and the notes beside the code they describe (desktop/, deploy/). */
const pages = [
  join(REPO_ROOT, "README.md"),
  join(REPO_ROOT, "desktop", "README.md"),
  join(REPO_ROOT, "deploy", "reverse-proxy.md"),
  ...readdirSync(docsDir, { recursive: true })
    .map((name) => join(docsDir, String(name)))
    .filter((path) => path.endsWith(".md")),
];

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = (match[1] ?? "").replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1] ?? "");
}

test("the docs pages exist and the README stays a front door", () => {
  for (const name of ["chat", "turns", "search", "agents", "configuration", "security", "design"])
    expect(existsSync(join(docsDir, `${name}.md`))).toBe(true);
  for (const name of ["streams", "desktop", "deploy", "testing", "benchmarks"])
    expect(existsSync(join(docsDir, `${name}.md`))).toBe(true);
  expect(statSync(join(REPO_ROOT, "README.md")).size).toBeLessThan(14_000);
});

test("every relative link in README.md, docs/, desktop/ and deploy/ resolves, anchors included", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const text = readFileSync(page, "utf8");
    for (const link of links(text)) {
      if (/^[a-z][a-z+.-]*:/i.test(link)) continue; // http:, https:, mailto:
      checked++;
      const [path = "", anchor] = link.split("#");
      const target = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
      const where = `${relative(REPO_ROOT, page)} → ${link}`;
      if (relative(REPO_ROOT, target).startsWith("..")) broken.push(`${where}: outside the repository`);
      else if (!existsSync(target)) broken.push(`${where}: no such file`);
      else if (anchor && target.endsWith(".md") && !headingIds(readFileSync(target, "utf8")).has(anchor))
        broken.push(`${where}: no heading with that id`);
    }
  }
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(40);
});

test("the heading ids follow GitHub's rules", () => {
  const ids = headingIds("# Chat\n## §7 Streams\n## Try it\n## Try it\n### The `index` CLI: fails!\n");
  expect([...ids]).toEqual(["chat", "7-streams", "try-it", "try-it-1", "the-index-cli-fails"]);
});

test("nothing in the repository points outside it, and code cites docs/design.md", () => {
  const tracked = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: REPO_ROOT }).stdout.toString().split("\0");
  const outside = new RegExp(`\\.\\./${"shared"}\\b`);
  const oldCitation = new RegExp(`${"DESIGN"}\\.md`);
  const offenders: string[] = [];
  for (const file of tracked) {
    if (!/\.(ts|md|sh|toml|json|yml|html|css)$|^\.ci\//.test(file)) continue;
    if (!existsSync(join(REPO_ROOT, file))) continue;
    const text = readFileSync(join(REPO_ROOT, file), "utf8");
    if (outside.test(text)) offenders.push(`${file}: points at a folder beside the repository`);
    if (oldCitation.test(text)) offenders.push(`${file}: cites a design page outside the repository`);
  }
  expect(offenders).toEqual([]);
  // Code comments point at the numbered decisions, and those numbers exist.
  const design = readFileSync(join(docsDir, "design.md"), "utf8");
  const sections = new Set([...design.matchAll(/^## §(\d+) /gm)].map((m) => m[1]));
  for (const file of tracked.filter((f) =>
    /^(server|schemas|tests|bench|desktop|scripts)\/.*\.ts$/.test(f),
  )) {
    if (!existsSync(join(REPO_ROOT, file))) continue;
    for (const m of readFileSync(join(REPO_ROOT, file), "utf8").matchAll(/docs\/design\.md §(\d+)/g))
      expect({ file, section: m[1], exists: sections.has(m[1]) }).toEqual({
        file,
        section: m[1],
        exists: true,
      });
  }
});
