/**
 * MCP tools in a chat (server/chat/runtime/mcp-tools.ts): a scripted tool-calling model sees the tools
 * of server-everything (over Streamable HTTP on loopback, local mode) as `everything__<tool>` custom
 * tools and calls one; the call and its result stream as tool events like every other tool. A server
 * with approval "ask" pauses the call on a question answered through /api/chat/question: allowed, it
 * runs; denied, the model gets the refusal and the server sees no call. A server that cannot be reached
 * leaves the session working, with a diagnostic.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { everythingOverHttp } from "../helpers/mcp.ts";
import { type Event, eventReader, lines } from "../helpers/streams.ts";

setDefaultTimeout(60_000);

const toolUse = { stopReason: "toolUse" as const };
let t: TestApp;
let everything: { url: string; stop(): void };

beforeAll(async () => {
  everything = await everythingOverHttp();
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
  everything.stop();
});

const addServer = (name: string, approval: "ask" | "allow", url = everything.url) =>
  t.json("/api/chat/mcp-servers", postJson({ name, transport: "http", url, approval }));
const toolOutputs = (events: Event[], id: string) =>
  events.filter((e) => e.type === "tool" && e.part.toolCallId === id && e.part.state?.startsWith("output"));

test("the model sees the MCP tools and calls one; the call streams like any tool", async () => {
  expect((await addServer("everything", "allow")).status).toBe(200);
  let seen: string[] = [];
  const model = scripted(t, [
    (context: Context) => {
      seen = (context.tools ?? []).map((tool) => tool.name);
      return fauxAssistantMessage(
        [fauxToolCall("everything__echo", { message: "through MCP" }, { id: "m1" })],
        toolUse,
      );
    },
    fauxAssistantMessage("It echoed."),
  ]);
  const events = await lines(await chat(t, { message: "echo please", model: model.id }));
  expect(seen).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum", "web_fetch"]));
  const outputs = toolOutputs(events, "m1");
  expect(outputs.length).toBeGreaterThan(0);
  expect(JSON.stringify(outputs.at(-1)?.part.output)).toContain("Echo: through MCP");
  expect(outputs.at(-1)?.part.state).toBe("output-available");
  expect(events.at(-1)?.type).toBe("done");
  model.dispose();
  await t.json("/api/chat/mcp-servers/everything", { method: "DELETE" });
});

test('"ask": each call waits for the user; allowed it runs, denied it does not', async () => {
  expect((await addServer("asking", "ask")).status).toBe(200);
  const model = scripted(t, [
    fauxAssistantMessage([fauxToolCall("asking__echo", { message: "may I" }, { id: "a1" })], toolUse),
    fauxAssistantMessage([fauxToolCall("asking__echo", { message: "again" }, { id: "a2" })], toolUse),
    fauxAssistantMessage("Done asking."),
  ]);
  const reader = eventReader(await chat(t, { message: "ask first", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  const answer = (toolCallId: string, selected: string) =>
    t.json(
      "/api/chat/question",
      postJson({
        sessionId: start.sessionId,
        toolCallId,
        answer: { kind: "single", questionId: "mcp-approval", selectedIds: [selected] },
      }),
    );
  const first = await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  expect(first.part.question).toMatchObject({ toolCallId: "a1", kind: "single" });
  expect(first.part.question.prompt).toContain("Allow the MCP server 'asking' to run its tool 'echo'");
  expect((await answer("a1", "allow")).status).toBe(200);
  const second = await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  expect(second.part.question.toolCallId).toBe("a2");
  expect((await answer("a2", "deny")).status).toBe(200);
  const events = await reader.rest();
  expect(JSON.stringify(toolOutputs(events, "a1").at(-1)?.part)).toContain("Echo: may I");
  const denied = toolOutputs(events, "a2").at(-1)?.part;
  expect(denied?.state).toBe("output-error");
  expect(JSON.stringify(denied)).toContain("The user did not allow this call");
  expect(JSON.stringify(denied)).not.toContain("Echo: again");
  expect(events.at(-1)?.type).toBe("done");
  model.dispose();
  await t.json("/api/chat/mcp-servers/asking", { method: "DELETE" });
});

test("a server that cannot be reached leaves the chat working", async () => {
  await addServer("gone", "allow", "http://127.0.0.1:1/mcp");
  const model = scripted(t, [fauxAssistantMessage("Still here.")]);
  const events = await lines(await chat(t, { message: "hi", model: model.id }));
  expect(events.at(-1)?.type).toBe("done");
  expect(JSON.stringify(events)).toContain("Still here.");
  model.dispose();
});
