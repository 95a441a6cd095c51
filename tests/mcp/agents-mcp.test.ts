/**
 * An agent calls the MCP tools of the servers its config lists (`mcp_servers`): a scripted tool-calling
 * model behind the agent, over the real /v1/chat WebSocket, sees `everything__echo` (server-everything
 * over Streamable HTTP on loopback, local mode), calls it, and gets the result back in its next round.
 * The call and its result stream as `tool_call` / `tool_result` frames. An agent whose config lists no
 * server sees no MCP tool; a server set to "ask" gives an agent none (it replies unattended), and a
 * `notice` frame (over HTTP: the reply's `notices`) says so.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { as, chat } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { addHttpServers, everythingOverHttp } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let everything: { url: string; stop(): void };
beforeAll(async () => {
  everything = await everythingOverHttp();
  t = await createTestApp();
  server = listen(t);
  await addHttpServers(t, everything.url, [
    ["everything", "allow"],
    ["asking", "ask"],
  ]);
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
  // The call and its result are frames on the socket, labelled with the agent like its stream frames.
  const call = frames.find((f) => f.type === "tool_call");
  expect(call).toMatchObject({
    tool_call_id: "e1",
    name: "everything__echo",
    arguments: { message: "agent here" },
    metadata: { agent_id: agent.id, agent_name: "Toolful", phase: "answer" },
  });
  const result = frames.find((f) => f.type === "tool_result");
  expect(result).toMatchObject({
    tool_call_id: "e1",
    name: "everything__echo",
    content: "Echo: agent here",
    is_error: false,
  });
  expect(result?.message_id).toBe(call?.message_id);
  expect(frames.indexOf(call as never)).toBeLessThan(frames.indexOf(result as never));
  // The "ask" server is refused visibly: a notice says why, and the final frame lists it.
  const notice = frames.find((f) => f.type === "notice");
  expect(notice).toMatchObject({ code: "mcp_server_unavailable" });
  expect(String(notice?.message)).toContain("The MCP server 'asking' asks before each call");
  expect(String(notice?.message)).toContain('Set it to "allow"');
  expect(JSON.stringify(frames.at(-1))).toContain("asks before each call");
  model.dispose();
});

test("over HTTP an agent's reply names the servers it could not use, and why", async () => {
  const model = scripted(t, [fauxAssistantMessage("Without tools.")]);
  const api = as(t);
  const agent = (
    await api.post("/v1/agents", {
      name: "Listing",
      role: "caller",
      model: model.id,
      config: { mcp_servers: ["asking", "nowhere"] },
    })
  ).body;
  const reply = await api.post("/v1/chat/messages", {
    target_id: agent.id,
    target_type: "agent",
    content: "hi",
  });
  expect(reply.status).toBe(200);
  expect(reply.body.content).toBe("Without tools.");
  expect(reply.body.notices).toEqual([
    expect.stringContaining("The MCP server 'asking' asks before each call"),
    "The MCP server 'nowhere' this agent lists is not configured.",
  ]);
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
