/**
 * `atrium routes` and docs/routes.md (issue 25: one hop from a URL to its code): every route of the
 * composed app is listed with its family and the file that declares it, and the generated page is kept
 * fresh: a route added, moved or removed without regenerating it fails here.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { listRoutes, routesMarkdown } from "../server/routes-command.ts";
import { REPO_ROOT } from "./helpers/app.ts";

test("docs/routes.md is what `atrium routes --markdown` prints today", async () => {
  const fresh = routesMarkdown(await listRoutes());
  const committed = readFileSync(join(REPO_ROOT, "docs/routes.md"), "utf8");
  // On failure: bun server/main.ts routes --markdown > docs/routes.md
  expect(committed).toBe(fresh);
});

test("every route has one source file, which names its path, and the family whose folder holds it", async () => {
  const rows = await listRoutes();
  expect(rows.length).toBeGreaterThan(100);
  for (const family of ["chat", "turns", "search", "agents", "app"])
    expect(rows.some((r) => r.family === family)).toBe(true);
  for (const row of rows) {
    expect(row.source).toStartWith("server/");
    const text = readFileSync(join(REPO_ROOT, row.source), "utf8");
    const head = row.path.split("/").slice(0, 3).join("/");
    expect(text).toContain(head);
    if (row.family !== "app") expect(row.source).toStartWith(`server/${row.family}/`);
  }
  const turn = rows.find((r) => r.method === "POST" && r.path === "/api/sessions/:session_id/turns");
  expect(turn).toEqual({
    method: "POST",
    path: "/api/sessions/:session_id/turns",
    family: "turns",
    source: "server/turns/routes/turns.ts",
  });
});

test("`atrium routes` prints the table in a terminal", () => {
  const run = Bun.spawnSync([process.execPath, "server/main.ts", "routes"], { cwd: REPO_ROOT, env: {} });
  expect(run.exitCode).toBe(0);
  const lines = run.stdout.toString().trim().split("\n");
  expect(lines[0]).toMatch(/^METHOD\s+PATH\s+FAMILY\s+SOURCE$/);
  expect(lines).toContainEqual(
    expect.stringMatching(/^WS\s+\/v1\/chat\s+agents\s+server\/agents\/routes\/chat-socket\.ts$/),
  );
});
