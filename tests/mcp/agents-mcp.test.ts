/**
 * An agent calls the MCP tools of the servers its config lists (`mcp_servers`): a scripted tool-calling
 * model behind the agent, over the real /v1/chat WebSocket, sees `everything__echo` (server-everything
 * over Streamable HTTP on loopback, local mode), calls it, and gets the result back in its next round.
 * An agent whose config lists no server sees no MCP tool; a server set to "ask" gives an agent none.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { as, chat } from "../helpers/agents.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { everythingOverHttp } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let everything: { url: string; stop(): void };
beforeAll(async () => {
  everything = await everythingOverHttp();
  t = await createTestApp();
  server = listen(t);
  for (const [name, approval] of [
    ["everything", "allow"],
    ["asking", "ask"],
  ] as const)
    await t.json(
      "/api/chat/mcp-servers",
      postJson({ name, transport: "http", url: everything.url, approval }),
    );
});
afterAll(async () => {
  await server.stop();
  await t.close();
  everything.stop();
});

test("an agent calls a listed server's tool and reads its result", async () => {
  const seen: { tools: string[]; results: string[] }[] = [];
  const record = (context: Context) =>
    seen.push({
      tools: (context.tools ?? []).map((tool) => tool.name),
      results: context.messages
        .filter((m) => m.role === "toolResult")
        .map((m) => JSON.stringify((m as { content: unknown }).content)),
    });
  const model = scripted(t, [
    (context: Context) => {
      record(context);
      return fauxAssistantMessage(
        [fauxToolCall("everything__echo", { message: "agent here" }, { id: "e1" })],
        {
          stopReason: "toolUse",
        },
      );
    },
    (context: Context) => {
      record(context);
      return fauxAssistantMessage("The server echoed it.");
    },
  ]);
  const api = as(t);
  const agent = (
    await api.post("/v1/agents", {
      name: "Toolful",
      role: "caller",
      model: model.id,
      config: { mcp_servers: ["everything", "asking"] },
    })
  ).body;
  const c = await chat(server.url, { target_id: agent.id, target_type: "agent" });
  const frames = await c.ask("echo something");
  c.close();
  expect(frames.map((f) => (f.type === "stream" ? f.chunk : "")).join("")).toBe("The server echoed it.");
  expect(seen[0]?.tools).toContain("everything__echo");
  expect(seen[0]?.tools.some((name) => name.startsWith("asking__"))).toBe(false);
  expect(seen[1]?.results.join("")).toContain("Echo: agent here");
  model.dispose();
});

test("an agent whose config lists no server sees no MCP tool", async () => {
  let tools: string[] | undefined;
  const model = scripted(t, [
    (context: Context) => {
      tools = (context.tools ?? []).map((tool) => tool.name);
      return fauxAssistantMessage("No tools.");
    },
  ]);
  const agent = (await as(t).post("/v1/agents", { name: "Plain", role: "talker", model: model.id })).body;
  const c = await chat(server.url, { target_id: agent.id, target_type: "agent" });
  await c.ask("hi");
  c.close();
  expect(tools).toEqual([]);
  model.dispose();
});
