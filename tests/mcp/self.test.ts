/**
 * Atrium's own MCP server added to itself (docs/mcp-tools.md): on a team server a user creates a
 * personal access token with the `mcp` and `search` scopes and adds this server's `/mcp` as an HTTP MCP
 * server with it (the operator's APP_OUTBOUND_ALLOW names the loopback origin: the outbound rule
 * refuses loopback on a team server otherwise). A scripted tool-calling model, through a real provider
 * wire, then lists and searches the user's index from a chat through `atrium__…` tools: the call goes
 * out over HTTP and back in through /mcp, so the chat family reaches search without importing it. The
 * token's scopes and owner hold on the way back in (no Python tool; another user's index unseen), and
 * the token reaches neither the model nor the chat's stream.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { freePort } from "../helpers/mcp.ts";
import { type Event, lines } from "../helpers/streams.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let ann: SignedUser;
let token: string;

const toolUse = { stopReason: "toolUse" as const };
const toolOutput = (events: Event[], id: string) =>
  events
    .filter((e) => e.type === "tool" && e.part.toolCallId === id && e.part.state?.startsWith("output"))
    .at(-1)?.part;

async function buildIndex(user: SignedUser, name: string, text: string) {
  const built = await t.json(
    "/search/index",
    postJson({ name, documents: [{ name: `${name}.txt`, text }] }, user.bearer),
  );
  expect(built.status).toBe(200);
}

beforeAll(async () => {
  const port = await freePort();
  t = await authApp({ env: { APP_OUTBOUND_ALLOW: `http://127.0.0.1:${port}` } });
  server = listen(t, port);
  ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  await buildIndex(ann, "lab", "Mira Okafor runs the Harbor Lab in Lisbon. The Harbor Lab studies tides.");
  await buildIndex(bob, "bobs-secrets", "Bob keeps the vault code in the Blue Room.");
  const created = await t.json<{ token: string }>(
    "/api/auth/tokens",
    postJson({ name: "atrium to itself", scopes: ["mcp", "search"] }, ann.bearer),
  );
  expect(created.status).toBe(200);
  token = created.body.token;
  const added = await t.json(
    "/api/chat/mcp-servers",
    postJson(
      { name: "atrium", transport: "http", url: `${server.url}/mcp`, token, approval: "allow" },
      ann.bearer,
    ),
  );
  expect(added.status).toBe(200);
});
afterAll(async () => {
  await server?.stop();
  await t?.close();
});

test("a chat searches the user's index through Atrium's own /mcp", async () => {
  const listed = await t.json<{ tools: { name: string }[] }>("/api/chat/mcp-servers/atrium/tools", {
    headers: ann.bearer,
  });
  expect(listed.status).toBe(200);
  // The token's scopes hold on the way back in: search tools, no Python, files or agents.
  expect(listed.body.tools.map((tool) => tool.name).sort()).toEqual([
    "list_indexes",
    "search_global",
    "search_local",
  ]);

  const contexts: string[] = [];
  let seen: string[] = [];
  const model = scripted(t, [
    (context: Context) => {
      seen = (context.tools ?? []).map((tool) => tool.name);
      contexts.push(JSON.stringify(context));
      return fauxAssistantMessage([fauxToolCall("atrium__list_indexes", {}, { id: "s1" })], toolUse);
    },
    (context: Context) => {
      contexts.push(JSON.stringify(context));
      return fauxAssistantMessage(
        [
          fauxToolCall(
            "atrium__search_local",
            { query: "Who runs the Harbor Lab?", index: "lab" },
            { id: "s2" },
          ),
        ],
        toolUse,
      );
    },
    (context: Context) => {
      contexts.push(JSON.stringify(context));
      return fauxAssistantMessage("Mira Okafor runs it.");
    },
  ]);
  const response = await chat(t, { message: "who runs the lab?", model: model.id }, ann.bearer);
  expect(response.status).toBe(200);
  const events = await lines(response);
  expect(seen).toEqual(expect.arrayContaining(["atrium__list_indexes", "atrium__search_local"]));
  expect(seen).not.toContain("atrium__run_python");

  const indexes = toolOutput(events, "s1");
  expect(indexes?.state).toBe("output-available");
  expect(JSON.stringify(indexes?.output)).toContain("lab");
  expect(JSON.stringify(indexes?.output)).not.toContain("bobs-secrets");

  const searched = toolOutput(events, "s2");
  expect(searched?.state).toBe("output-available");
  const viaHttp = await t.json<{ response: string }>(
    "/search/local",
    postJson({ query: "Who runs the Harbor Lab?", index: "lab" }, ann.bearer),
  );
  expect(viaHttp.status).toBe(200);
  expect(JSON.stringify(searched?.output)).toContain(
    JSON.stringify(viaHttp.body.response.slice(0, 40)).slice(1, -1),
  );
  expect(events.at(-1)?.type).toBe("done");

  // The token went to /mcp only: never to the model, never in the chat's stream.
  expect(contexts.join("")).not.toContain(token);
  expect(JSON.stringify(events)).not.toContain(token);
  model.dispose();
});

test("the token's revocation ends what the server can do through itself", async () => {
  const tokens = await t.json<{ tokens: { id: string }[] }>("/api/auth/tokens", { headers: ann.bearer });
  const id = tokens.body.tokens[0]?.id as string;
  expect((await t.json(`/api/auth/tokens/${id}`, { method: "DELETE", headers: ann.bearer })).status).toBe(
    200,
  );
  const refused = await t.json<{ message: string }>("/api/chat/mcp-servers/atrium/tools", {
    headers: ann.bearer,
  });
  expect(refused.status).toBe(502);
  expect(refused.body.message).toContain("MCP server 'atrium'");
});
