/**
 * What a server start loads (docs/design.md, "Start-up"): the real server, started as a user starts it
 * (`bun server/main.ts`), with a `--preload` plugin that records which entry files of pi's packages,
 * typebox 1.x and the MCP SDK the process loads (tests/fixtures/record-loads.ts). When /health/ready
 * first answers 200, none of pi-ai, pi-coding-agent, typebox 1.x (pi's tool schemas), the MCP SDK,
 * the OpenAPI generator (@elysiajs/openapi, 260 KB), search's `entities` or graphology (search's
 * communities and graph layout), search's answerers and pipeline, chat's live session (its tools, guards
 * and plan mode) or a turn's sandbox and execution (the REPL, host tools, the RLM loop) has loaded: each
 * loads on first use. The first model
 * request loads pi-ai; the first MCP session loads the SDK's server side; the first /swagger/json the
 * generator. Module loads are asserted, never timings (bench/http.ts times it).
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";
import { MAIN, type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";

const PLUGIN = join(REPO_ROOT, "tests", "fixtures", "record-loads.ts");
const tmp = tempDir("atrium-lazy-start-");
const dir = tmp.path;
const loadsFile = join(dir, "loads");
let server: ServerProcess | undefined;

afterAll(async () => {
  server?.proc.kill("SIGTERM");
  await server?.exited;
  tmp.remove();
});

/** The packages loaded so far: `pi-ai`, `pi-coding-agent`, …, `typebox` (1.x) and `mcp-sdk` (any of its entry files). */
function loaded(): Set<string> {
  const names = new Set<string>();
  for (const line of readFileSync(loadsFile, "utf8").split("\n")) {
    const pi = line.match(/@mariozechner\/([^/]+)\/dist\/index\.js$/);
    if (pi?.[1]) names.add(pi[1]);
    if (line.includes("@modelcontextprotocol/sdk/")) names.add("mcp-sdk");
    if (line.endsWith("node_modules/typebox/build/index.mjs")) names.add("typebox");
    if (line.endsWith("node_modules/@elysiajs/openapi/dist/index.mjs")) names.add("openapi");
    if (line.endsWith("node_modules/entities/dist/esm/index.js")) names.add("entities");
    if (line.endsWith("node_modules/graphology/dist/graphology.mjs")) names.add("graphology");
    const search = line.match(/server\/search\/(?:services|indexing)\/(local|global|pipeline)\.ts$/);
    if (search?.[1]) names.add(`search-${search[1]}`);
    if (line.endsWith("server/chat/runtime/live-session.ts")) names.add("chat-live-session");
    const turn = line.match(/server\/turns\/services\/turn-(execution|sandbox)\.ts$/);
    if (turn?.[1]) names.add(`turns-${turn[1]}`);
  }
  return names;
}

test("at /health/ready 200 neither pi-ai, pi-coding-agent, typebox 1.x, the MCP SDK, the OpenAPI generator, entities, graphology, search's answerers and pipeline, chat's live session nor a turn's sandbox and execution is loaded; first use loads them", async () => {
  writeFileSync(loadsFile, "");
  server = await startServerProcess(
    ["--preload", PLUGIN, MAIN, "--port", "0", "--data-dir", join(dir, "data")],
    { binary: process.execPath, env: { ATRIUM_TEST_LOADS: loadsFile } },
  );
  await waitForOk(`${server.url}/health/ready`, 60_000);
  const atReady = loaded();
  // entities: search's HTML reader loads it when it first runs (in a parse process:
  // tests/search/parser.test.ts and documents.test.ts read HTML with entities).
  // graphology (with Louvain and the circle packing): search's first index build and first graph view
  // (tests/search/index.test.ts and graph.test.ts build communities and lay a graph out).
  // search-*: search's local and global answerers and its indexing pipeline (with the first question, the
  // first index build).
  const lazy = [
    ...["pi-ai", "pi-coding-agent", "mcp-sdk", "typebox", "openapi", "entities", "graphology"],
    ...["search-local", "search-global", "search-pipeline"],
    ...["chat-live-session", "turns-execution", "turns-sandbox"],
  ];
  expect([...atReady].filter((n) => lazy.includes(n))).toEqual([]);

  // The plugin does see these files: a model request loads pi-ai.
  const models = await fetch(`${server.url}/api/chat/models`);
  expect(models.status).toBe(200);
  const body = (await models.json()) as { models: { key: string }[] };
  expect(body.models.map((m) => m.key)).toContain("offline/offline");
  expect(loaded().has("pi-ai")).toBe(true);
  expect(loaded().has("mcp-sdk")).toBe(false);

  // The first MCP session loads the SDK.
  const init = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    }),
  });
  expect(init.status).toBe(200);
  expect(init.headers.get("mcp-session-id")).toBeTruthy();
  expect(await init.text()).toContain('"serverInfo"');
  expect(loaded().has("mcp-sdk")).toBe(true);

  // The first index build loads search's pipeline; the first questions, its answerers, which answer.
  const build = await fetch(`${server.url}/search/index`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      name: "lazy",
      documents: [{ name: "note.txt", text: "Ada Lovelace worked with Charles Babbage in London." }],
    }),
  });
  expect(build.status).toBe(200);
  expect(loaded().has("search-pipeline")).toBe(true);
  expect(loaded().has("search-local")).toBe(false);
  for (const mode of ["local", "global"] as const) {
    const asked = await fetch(`${server.url}/search/${mode}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "Who worked with Charles Babbage?", index: "lazy" }),
    });
    expect(asked.status).toBe(200);
    expect(((await asked.json()) as { response: string }).response).toContain("Babbage");
    expect(loaded().has(`search-${mode}`)).toBe(true);
  }

  // The first chat session loads chat's live session, and the session opens.
  expect(loaded().has("chat-live-session")).toBe(false);
  const opened = await fetch(`${server.url}/api/chat/new`, { method: "POST" });
  expect(opened.status).toBe(200);
  expect(((await opened.json()) as { sessionId: string }).sessionId).toBeTruthy();
  expect(loaded().has("chat-live-session")).toBe(true);

  // The first turn loads its sandbox and execution, and runs its code in the interpreter.
  expect(loaded().has("turns-execution")).toBe(false);
  const session = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "lazy" }),
  });
  expect(session.status).toBe(200);
  const { id } = (await session.json()) as { id: string };
  const turn = await fetch(`${server.url}/api/sessions/${id}/turns`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
    body: JSON.stringify({ text: "```python\nprint(6 * 7)\n```" }),
  });
  expect(turn.status).toBe(200);
  const stream = await turn.text();
  expect(stream).toContain('"output":"42');
  expect(stream).toMatch(/"type":"turn_finish"[^\n]*"status":"completed"/);
  expect(loaded().has("turns-execution")).toBe(true);
  expect(loaded().has("turns-sandbox")).toBe(true);

  // The first request for the API document loads the OpenAPI generator, and the document lists the routes.
  expect(loaded().has("openapi")).toBe(false);
  const document = await fetch(`${server.url}/swagger/json`);
  expect(document.status).toBe(200);
  const spec = (await document.json()) as {
    openapi: string;
    info: { title: string };
    paths: Record<string, unknown>;
  };
  expect(spec.openapi).toStartWith("3.1");
  expect(spec.info.title).toBe("Atrium");
  expect(Object.keys(spec.paths)).toContain("/health/ready");
  expect(loaded().has("openapi")).toBe(true);
}, 120_000);
