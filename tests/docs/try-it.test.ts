/**
 * Every "Try it" section of the family pages runs as written. The test starts a real server process on a
 * free port over a temp data dir, then runs each page's ```sh blocks under its "Try it" heading with
 * bash, in order and as one shell session (later blocks use variables of earlier ones, as a reader's
 * terminal would), from the repository root. `ATRIUM` is the server's address and `APP_DATA_DIR` its data
 * dir (so `npx bun server/main.ts index` writes where the server reads). A command that fails, or output
 * that carries an error in any family's shape, fails the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";
import { type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir("atrium-try-it-");
const dataDir = join(dir.path, "data");
let server: ServerProcess;

beforeAll(async () => {
  // One warm interpreter, as `npm start` keeps, so the turns page's first turn need not wait for one.
  const env = { APP_DATA_DIR: dataDir, APP_SANDBOX_WARM: "1" };
  server = await startServerProcess(["--port", "0"], { env });
  await waitForOk(`${server.url}/health/ready`);
}, 60_000);

afterAll(async () => {
  server?.proc.kill("SIGTERM");
  await server?.exited;
  dir.remove();
});

/** The ```sh blocks under a page's "## Try it" heading, in order. */
export function tryItBlocks(markdown: string): string[] {
  const start = markdown.search(/^## Try it$/m);
  if (start < 0) return [];
  const rest = markdown.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
}

/** What an error looks like in each family's output: chat's NDJSON, turns' envelope and events, FastAPI. */
const ERROR_MARKERS = [/"type":\s*"error"/, /^event: turn_error/m, /"error":\s*\{/, /"detail":/];

async function runPage(page: string) {
  const blocks = tryItBlocks(readFileSync(join(REPO_ROOT, "docs", page), "utf8"));
  const script = `set -eo pipefail\n${blocks.join("\n")}`;
  const proc = Bun.spawn(["bash", "-c", script], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? dir.path,
      ATRIUM: server.url,
      APP_DATA_DIR: dataDir,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  const errors = ERROR_MARKERS.filter((marker) => marker.test(stdout)).map(String);
  return { blocks: blocks.length, code, stdout, stderr, errors };
}

describe("the docs' Try it sections run as written against a live server", () => {
  test("the extractor finds the sh blocks under Try it and nothing else", () => {
    const page =
      "# X\n```sh\nnope\n```\n## Try it\ntext\n```sh\na\n```\n```js\nb\n```\n```sh\nc\n```\n## Next\n```sh\nd\n```\n";
    expect(tryItBlocks(page)).toEqual(["a\n", "c\n"]);
  });

  const pages: [string, (stdout: string) => void][] = [
    [
      "chat.md",
      (out) => {
        expect(out).toContain('"type":"start"');
        expect(out).toContain('"type":"done"');
        expect(out).toContain('"sessions"');
      },
    ],
    [
      "turns.md",
      (out) => {
        // print(sum(range(10))) ran in the sandbox; SUBMIT(answer=6*7) in the AI SDK form.
        expect(out).toContain("event: turn_start");
        expect(out).toContain("45");
        expect(out).toContain('"delivery":"replay"');
        expect(out).toContain("42");
        expect(out).toContain("data: [DONE]");
      },
    ],
    [
      "search.md",
      (out) => {
        expect(out).toContain('index "carol"');
        expect(out).toContain("Marley");
        expect(out).toContain("event: done");
        expect(out).toContain('"questions"');
        expect(out).toContain('"name":"notes"');
      },
    ],
    [
      "agents.md",
      (out) => {
        expect(out).toContain("connected: session");
        expect(out).toContain("[Ada]");
        expect(out).toContain("[Bob]");
        // The replies' text arrives (the offline model says so), not just the frames.
        expect(out).toContain("No model is configured");
        expect(out.match(/session ended/g)?.length).toBe(2);
        expect(out).toContain('"messages"');
      },
    ],
    [
      "terminal.md",
      (out) => {
        // The one-shot turn's answer (SUBMIT(6 * 7)), its NDJSON, the failure's exit code, chat's reply.
        expect(out).toMatch(/^42$/m);
        expect(out).toContain('"output":"hello from the sandbox\\n"');
        expect(out).toContain('{"type":"turn_finish"');
        expect(out).toContain("exit code 1");
        expect(out).toContain("No model is configured");
      },
    ],
  ];
  for (const [page, check] of pages) {
    test(page, async () => {
      const result = await runPage(page);
      expect(result.blocks).toBeGreaterThan(0);
      expect({ page, code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({
        page,
        code: 0,
        stderr: "",
      });
      expect(result.errors).toEqual([]);
      check(result.stdout);
    }, 120_000);
  }
});
