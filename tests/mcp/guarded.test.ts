/**
 * Who may reach Atrium's MCP server, and how much: on a team server only personal access tokens with
 * the `mcp` scope (a session cookie or token is 403), tools limited to the token's other scopes, owners
 * kept apart exactly as over HTTP (files, indexes, sessions), a revoked token stops a live session at
 * once; the local surface's Host and Origin rules; and a hostile client's bounds (a huge message, a
 * body that never stops, many sessions).
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { authApp, OWN_ORIGIN, type SignedUser, signUp } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { connectMcp, textOf } from "./client.ts";

setDefaultTimeout(60_000);

let t: TestApp | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;
afterEach(async () => {
  await server?.stop();
  await t?.close();
  t = server = undefined;
});

async function token(app: TestApp, user: SignedUser, scopes: string[]) {
  const created = await app.json<{ id: string; token: string }>(
    "/api/auth/tokens",
    postJson({ name: scopes.join(" "), scopes }, user.bearer),
  );
  expect(created.status).toBe(200);
  return { id: created.body.id, headers: { authorization: `Bearer ${created.body.token}` } };
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A raw initialize: the response and the session id it opened. */
async function initialize(app: TestApp, headers: Record<string, string> = {}) {
  const response = await app.request("/mcp", {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify(INITIALIZE),
  });
  await response.text();
  return { status: response.status, session: response.headers.get("mcp-session-id") };
}

const ping = (app: TestApp, session: string, headers: Record<string, string> = {}) =>
  app.request("/mcp", {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
  });

test("a team server takes only access tokens with mcp; a session credential or none is refused", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  expect((await initialize(t)).status).toBe(401);
  for (const credential of [ann.bearer, { ...ann.cookie, ...OWN_ORIGIN }]) {
    const response = await t.request("/mcp", {
      method: "POST",
      headers: { ...MCP_HEADERS, ...credential },
      body: JSON.stringify(INITIALIZE),
    });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain("personal access token with the mcp scope");
  }
  const noMcp = await token(t, ann, ["turns", "search"]);
  const refused = await t.request("/mcp", {
    method: "POST",
    headers: { ...MCP_HEADERS, ...noMcp.headers },
    body: JSON.stringify(INITIALIZE),
  });
  expect(refused.status).toBe(403);
  expect(await refused.text()).toContain("'mcp'");
  const good = await token(t, ann, ["mcp"]);
  expect((await initialize(t, good.headers)).status).toBe(200);
});

test("tools follow the token's scopes: listed only when covered, refused naming the scope", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const onlyMcp = await connectMcp(server.url, (await token(t, ann, ["mcp"])).headers);
  expect((await onlyMcp.client.listTools()).tools).toEqual([]);
  await onlyMcp.close();

  const reader = await connectMcp(
    server.url,
    (await token(t, ann, ["mcp", "search:read", "turns:read"])).headers,
  );
  expect((await reader.client.listTools()).tools.map((x) => x.name)).toEqual([
    "list_indexes",
    "list_files",
    "read_file",
  ]);
  const write = await reader.client.callTool({
    name: "write_file",
    arguments: { path: "a.txt", content: "x" },
  });
  expect(write.isError).toBe(true);
  expect(textOf(write)).toBe("This access token lacks the scope 'turns' that write_file needs");
  expect((await t.request("/api/files/content?path=a.txt", { headers: ann.bearer })).status).toBe(404);
  await reader.close();
});

test("owners are kept apart: another user's files, indexes and MCP session are invisible", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  const all = ["mcp", "turns", "search"];
  const annToken = await token(t, ann, all);
  const bobToken = await token(t, bob, all);
  const annMcp = await connectMcp(server.url, annToken.headers);
  const written = await annMcp.client.callTool({
    name: "write_file",
    arguments: { path: "secret.txt", content: "ann's secret" },
  });
  expect(written.isError).toBeFalsy();
  const built = await t.request(
    "/search/index",
    postJson(
      { name: "anns", documents: [{ name: "a.txt", text: "Ann Lee founded Kestrel Works." }] },
      annToken.headers,
    ),
  );
  expect(built.status).toBe(200);

  const bobMcp = await connectMcp(server.url, bobToken.headers);
  expect(textOf(await bobMcp.client.callTool({ name: "list_files", arguments: {} }))).not.toContain("secret");
  const read = await bobMcp.client.callTool({ name: "read_file", arguments: { path: "secret.txt" } });
  expect(read.isError).toBe(true);
  expect(textOf(read)).toMatch(/^404: /);
  expect(JSON.parse(textOf(await bobMcp.client.callTool({ name: "list_indexes", arguments: {} })))).toEqual({
    indexes: [],
  });
  expect((await bobMcp.client.listResources()).resources).toEqual([]);
  await expect(bobMcp.client.readResource({ uri: "atrium://files/secret.txt" })).rejects.toThrow(/404/);
  await expect(bobMcp.client.readResource({ uri: "atrium://indexes/anns" })).rejects.toThrow(/No index/);
  // Ann's session id with Bob's token: as unknown as any other id.
  const stolen = await ping(t, annMcp.transport.sessionId as string, bobToken.headers);
  expect(stolen.status).toBe(404);
  expect((await ping(t, annMcp.transport.sessionId as string, annToken.headers)).status).toBe(200);
  await annMcp.close();
  await bobMcp.close();
});

test("a token revoked mid-session is refused at once and its session is closed", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const annToken = await token(t, ann, ["mcp", "turns"]);
  const mcp = await connectMcp(server.url, annToken.headers);
  expect((await mcp.client.callTool({ name: "list_files", arguments: {} })).isError).toBeFalsy();
  const session = mcp.transport.sessionId as string;
  const held = t.ctx.connections.size;
  expect(held).toBeGreaterThanOrEqual(1);
  const revoked = await t.request(`/api/auth/tokens/${annToken.id}`, {
    method: "DELETE",
    headers: ann.bearer,
  });
  expect(revoked.status).toBe(200);
  await expect(mcp.client.callTool({ name: "list_files", arguments: {} })).rejects.toThrow(
    /Authentication required/,
  );
  expect(t.ctx.connections.size).toBeLessThan(held);
  // A new token of the same owner cannot pick the old session up: it was closed.
  const fresh = await token(t, ann, ["mcp"]);
  expect((await ping(t, session, fresh.headers)).status).toBe(404);
  await mcp.close().catch(() => {});
});

test("the local surface's Host and Origin rules apply to /mcp", async () => {
  t = await createTestApp();
  const foreignOrigin = await t.request("/mcp", {
    method: "POST",
    headers: { ...MCP_HEADERS, origin: "http://evil.example" },
    body: JSON.stringify(INITIALIZE),
  });
  expect(foreignOrigin.status).toBe(403);
  const rebound = await t.request("/mcp", {
    method: "POST",
    headers: { ...MCP_HEADERS, host: "evil.example:8000" },
    body: JSON.stringify(INITIALIZE),
  });
  expect(rebound.status).toBe(421);
  expect((await initialize(t, { origin: "http://localhost" })).status).toBe(200);
});

test("hostile clients: a huge message is 413, a body that keeps coming is cut, sessions are capped", async () => {
  t = await createTestApp();
  server = listen(t);
  const { session } = await initialize(t);
  expect(session).toBeString();
  const huge = JSON.stringify({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "write_file", arguments: { path: "big.txt", content: "x".repeat(9 * 1024 * 1024) } },
  });
  const declared = await ping(t, session as string, {});
  expect(declared.status).toBe(200);
  const tooBig = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": session as string, "mcp-protocol-version": "2025-06-18" },
    body: huge,
  });
  expect(tooBig.status).toBe(413);
  // The same without a length: a stream of chunks is cut at the cap.
  let sent = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > 9 * 1024 * 1024) return controller.close();
      sent += 64 * 1024;
      controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
    },
  });
  const chunked = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": session as string, "mcp-protocol-version": "2025-06-18" },
    body: endless,
    duplex: "half",
  } as RequestInit);
  expect(chunked.status).toBe(413);
  expect((await t.request("/api/files/content?path=big.txt")).status).toBe(404);
  const notJson = await t.request("/mcp", { method: "POST", headers: MCP_HEADERS, body: "{nope" });
  expect(notJson.status).toBe(400);
  expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);

  // One owner keeps at most 16 sessions: opening more closes the oldest.
  const opened = [session as string];
  for (let i = 0; i < 16; i++) opened.push((await initialize(t)).session as string);
  expect((await ping(t, opened[0] as string)).status).toBe(404);
  for (const id of opened.slice(1)) expect((await ping(t, id)).status).toBe(200);
});
