/**
 * Atrium as an MCP server, driven by the official SDK's own client over Streamable HTTP against a live
 * server on loopback (local mode): the handshake, every tool (search, Python as a turn with progress,
 * agents and fleets, memory, files) and every kind of resource, each checked against what the family's
 * own HTTP route says; bad arguments and unknown tools answer clearly and change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { agentModel, as } from "../helpers/agents.ts";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { createSession, turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";
import { type Connected, connectMcp, textOf } from "./client.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let mcp: Connected;
beforeAll(async () => {
  // A second interpreter starts while this (shared, busy) machine runs other suites: room to start.
  t = await turnsApp({
    edits: [
      ["sandbox_start_timeout_seconds = 25", "sandbox_start_timeout_seconds = 150"],
      ["preparation_timeout_seconds = 30", "preparation_timeout_seconds = 150"],
    ],
  });
  server = listen(t);
  mcp = await connectMcp(server.url);
});
afterAll(async () => {
  await mcp.close();
  await server.stop();
  await t.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  mcp.client.callTool({ name, arguments: args }) as Promise<{ content: unknown[]; isError?: boolean }>;

test("the handshake negotiates the SDK's protocol version and lists every tool with a schema", async () => {
  expect(mcp.client.getServerVersion()).toMatchObject({ name: "atrium" });
  expect(mcp.transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  expect(mcp.client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
  const { tools } = await mcp.client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(
    [
      "ask_agent",
      "ask_fleet",
      "list_files",
      "list_indexes",
      "memory_add",
      "memory_read",
      "memory_search",
      "read_file",
      "run_python",
      "search_global",
      "search_local",
      "write_file",
    ].sort(),
  );
  for (const tool of tools) {
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.description?.length).toBeGreaterThan(20);
    expect(tool.description).not.toContain("\n");
  }
  const write = tools.find((tool) => tool.name === "write_file");
  expect(write?.inputSchema.required).toEqual(["path", "content"]);
});

describe("files", () => {
  test("write, list and read go to the same files as the HTTP Files API", async () => {
    const written = await call("write_file", { path: "notes/plan.md", content: "# Plan\nship it\n" });
    expect(written.isError).toBeFalsy();
    expect(textOf(written)).toContain('"path": "notes/plan.md"');
    const page = await t.json<{ content: string }>("/api/files/content?path=notes/plan.md");
    expect(page.body.content).toBe("# Plan\nship it\n");

    const again = await call("write_file", { path: "notes/plan.md", content: "other" });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^409: /);
    expect((await t.json<{ content: string }>("/api/files/content?path=notes/plan.md")).body.content).toBe(
      "# Plan\nship it\n",
    );

    expect(textOf(await call("list_files", { path: "notes" }))).toContain("notes/plan.md");
    expect(textOf(await call("read_file", { path: "notes/plan.md" }))).toBe("# Plan\nship it\n");
    const missing = await call("read_file", { path: "notes/none.md" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^404: /);
  });

  test("files are resources; a file's resource is its content", async () => {
    await call("write_file", { path: "top.txt", content: "at the top" });
    const { resources } = await mcp.client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: "atrium://files/top.txt", name: "top.txt" }),
    );
    const read = await mcp.client.readResource({ uri: "atrium://files/top.txt" });
    expect(read.contents).toEqual([
      { uri: "atrium://files/top.txt", mimeType: "text/plain", text: "at the top" },
    ]);
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual([
      "atrium://files/{+path}",
      "atrium://artifacts/{id}",
      "atrium://indexes/{name}",
    ]);
    await expect(mcp.client.readResource({ uri: "atrium://elsewhere/x" })).rejects.toThrow(
      /Unknown resource/,
    );
    await expect(mcp.client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/Unknown resource/);
  });
});

test("search: indexes are listed, searched locally and globally, and reported as resources", async () => {
  const documents = [
    { name: "harbor.txt", text: "Mira Okafor runs the Harbor Lab in Lisbon. The Harbor Lab studies tides." },
    { name: "tides.txt", text: "Tides in Lisbon are studied by the Harbor Lab with Joao Silva." },
  ];
  const built = await t.json("/search/index", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "lab", documents }),
  });
  expect(built.status).toBe(200);
  const listed = JSON.parse(textOf(await call("list_indexes")));
  const http = (await t.json<{ indexes: unknown[] }>("/search/indexes")).body;
  expect(listed).toEqual(http);

  for (const kind of ["local", "global"] as const) {
    const viaMcp = textOf(await call(`search_${kind}`, { query: "Who runs the Harbor Lab?", index: "lab" }));
    const viaHttp = await t.json<{ response: string }>(`/search/${kind}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "Who runs the Harbor Lab?", index: "lab" }),
    });
    expect(viaMcp).toContain(viaHttp.body.response.slice(0, 40));
  }
  const report = await mcp.client.readResource({ uri: "atrium://indexes/lab" });
  expect(JSON.parse((report.contents[0] as { text: string }).text)).toMatchObject({
    name: "lab",
    documents: 2,
  });
  const { resources } = await mcp.client.listResources();
  expect(resources).toContainEqual(expect.objectContaining({ uri: "atrium://indexes/lab" }));
});

test("run_python runs a turn: output, artifact links readable as resources, progress notifications", async () => {
  const progress: { progress: number; message?: string }[] = [];
  const result = (await mcp.client.callTool(
    {
      name: "run_python",
      arguments: {
        code: "print(6 * 7)\na = create_artifact('Sum', 'total: 42', 'text/plain')",
      },
    },
    undefined,
    { onprogress: (p) => progress.push(p) },
  )) as { content: { type: string; uri?: string; text?: string }[]; isError?: boolean };
  expect(result.isError).toBeFalsy();
  expect(textOf(result)).toContain("output:\n42\n");
  expect(textOf(result)).toMatch(/turn session_id: /);
  const link = result.content.find((c) => c.type === "resource_link");
  expect(link?.uri).toMatch(/^atrium:\/\/artifacts\/art_/);
  const artifact = await mcp.client.readResource({ uri: link?.uri as string });
  expect(artifact.contents[0]).toMatchObject({ mimeType: "text/plain", text: "total: 42" });
  expect(progress.length).toBeGreaterThanOrEqual(2);
  expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
  expect(progress[0]?.message).toMatch(/^turn run_\S+ started$/);

  // The same turn session again: a Python exception is output the caller reads (the turn completed).
  const session = /turn session_id: (\S+)\)/.exec(textOf(result))?.[1] as string;
  expect(session).toStartWith("ses_");
  const failed = await call("run_python", { code: "raise ValueError('nope')", session_id: session });
  expect(textOf(failed)).toContain("ValueError: nope");
  expect(textOf(failed)).toContain(`(turn session_id: ${session})`);
});

test("a run_python call the client cancels cancels its turn (turns are durable otherwise)", async () => {
  const session = await createSession(t, "to cancel");
  const aborter = new AbortController();
  let runId: string | undefined;
  const call = mcp.client.callTool(
    { name: "run_python", arguments: { code: "n = 0\nwhile True:\n    n += 1", session_id: session } },
    undefined,
    {
      signal: aborter.signal,
      onprogress: (p) => {
        runId ??= /^turn (\S+) started$/.exec(p.message ?? "")?.[1];
        if (p.message?.includes("running code")) aborter.abort("enough");
      },
    },
  );
  await expect(call).rejects.toThrow();
  expect(runId).toStartWith("run_");
  // Read, not cancelled here: only the MCP layer's cancellation can have stopped it.
  await waitFor(
    async () => {
      const history = await t.json<{ items: { runId: string; status: string }[] }>(
        `/api/sessions/${session}/turns`,
      );
      return history.body.items.find((item) => item.runId === runId)?.status === "cancelled";
    },
    { what: "the turn to be cancelled", timeoutMs: 60_000 },
  );
});

describe("agents", () => {
  test("ask_agent and ask_fleet reply through the agents family; a conversation continues", async () => {
    const api = as(t);
    const model = agentModel(t, (prompt) => `echo: ${prompt}`);
    const agent = (await api.post("/v1/agents", { name: "Echo", role: "echoes", model: model.id })).body;
    const first = textOf(await call("ask_agent", { agent: "echo", message: "hello there" }));
    expect(first).toContain("echo: hello there");
    const session = /session_id: (\S+?);/.exec(first)?.[1] as string;
    expect(session).toStartWith("chat_");
    const second = textOf(
      await call("ask_agent", { agent: agent.id, message: "again", session_id: session }),
    );
    expect(second).toContain("echo: again");
    const history = await api.get(`/v1/chat/sessions/${session}/history`);
    expect(JSON.stringify(history.body)).toContain("hello there");

    const fleet = await api.post("/v1/fleets", {
      name: "Solo fleet",
      type: "CUSTOM",
      agent_ids: [agent.id],
      coordination_pattern: "sequential",
    });
    expect(fleet.status).toBe(200);
    expect(textOf(await call("ask_fleet", { fleet: "Solo fleet", message: "via fleet" }))).toContain(
      "via fleet",
    );
    const unknown = await call("ask_agent", { agent: "nobody", message: "hi" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("No agent with the id or name 'nobody'");
  });

  test("memory: add, search and read one entry, as the memory routes hold it", async () => {
    const api = as(t);
    const agent = (await api.post("/v1/agents", { name: "Keeper", role: "remembers" })).body;
    const added = JSON.parse(
      textOf(
        await call("memory_add", {
          owner_id: agent.id,
          owner_type: "agent",
          type: "PREFERENCES",
          content: "The user prefers tabs over spaces",
          tags: ["style"],
        }),
      ),
    );
    expect(added.id).toBeString();
    expect((await api.get(`/v1/memory/${added.id}`)).body.content).toBe("The user prefers tabs over spaces");
    const found = JSON.parse(
      textOf(await call("memory_search", { owner_id: agent.id, owner_type: "agent", query: "tabs" })),
    );
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([added.id]);
    expect(JSON.parse(textOf(await call("memory_read", { memory_id: added.id })))).toMatchObject({
      id: added.id,
      tags: ["style"],
    });
  });
});

describe("bad calls", () => {
  test("arguments against the schema are a tool error naming the field, and change nothing", async () => {
    const bad = await call("write_file", { path: "x.txt", content: 5 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Invalid arguments for write_file: \/content /);
    const extra = await call("list_indexes", { surprise: "x".repeat(2_000_000) });
    expect(extra.isError).toBeFalsy();
    expect((await t.json("/api/files/content?path=x.txt")).status).toBe(404);
  });

  test("an id of . or .. never reaches another route", async () => {
    for (const memory_id of ["..", ".", "../../api/files"]) {
      const read = await call("memory_read", { memory_id });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/^4\d\d: /);
    }
    const dots = await call("memory_read", { memory_id: ".." });
    expect(textOf(dots)).toContain("not a valid path");
    await expect(mcp.client.readResource({ uri: "atrium://artifacts/.." })).rejects.toThrow(
      /not a valid path/,
    );
    await expect(mcp.client.readResource({ uri: "atrium://artifacts/%2e%2e" })).rejects.toThrow(
      /not a valid path/,
    );
  });

  test("an unknown tool is a JSON-RPC error naming Atrium's tools", async () => {
    await expect(call("rm_rf", {})).rejects.toThrow(/Unknown tool 'rm_rf'. Atrium's tools: list_indexes/);
  });
});
