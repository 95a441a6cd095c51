/**
 * MCP servers as tools, configured and reached (server/mcp-client/, docs/mcp-tools.md): the per-user API
 * (clear 400s that change nothing; a token or header value never comes back; one user never sees
 * another's; the operator's servers from the policy for everyone, their names not takeable), and
 * server-everything over Streamable HTTP on a loopback port: reached in local mode, refused before
 * connecting on a team server (a listening server sees no connection) unless APP_OUTBOUND_ALLOW names it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer } from "node:http";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { everythingOverHttp } from "../helpers/mcp.ts";
import { policyVariant } from "../helpers/turns.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

const apps: TestApp[] = [];
const stops: (() => void)[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const stop of stops) stop();
});
async function app(options: Parameters<typeof createTestApp>[0] = {}) {
  const made = await createTestApp(options);
  apps.push(made);
  return made;
}

const SECRET = "s3cret-token-value-9f8e7d";

describe("the MCP server API", () => {
  test("bad input is a clear 400 that changes nothing; secrets are never returned; owners are apart", async () => {
    const logs = memoryLogger();
    const t = await app(twoUsers({ log: logs.log }));
    const post = (body: unknown, user = "ann") =>
      t.json<{ message: string }>("/api/chat/mcp-servers", postJson(body, asUser(user)));
    for (const [body, says] of [
      [{ name: "Bad Name", transport: "http", url: "https://x.example" }, "body.name"],
      [{ name: "web", transport: "http" }, "body.url: an http server needs a url"],
      [{ name: "web", transport: "http", url: "ftp://x.example" }, "body.url: only http and https URLs"],
      [{ name: "web", transport: "http", url: "https://u:p@x.example" }, "no credentials in the URL"],
      [
        { name: "web", transport: "http", url: "https://x.example", headers: { "Bad Header": "1" } },
        "not a header name",
      ],
      [
        { name: "web", transport: "http", url: "https://x.example", headers: { "Mcp-Session-Id": "1" } },
        "set by the MCP transport",
      ],
      [
        { name: "web", transport: "http", url: "https://x.example", headers: { "X-A": "a\r\nb" } },
        "no NUL or line breaks",
      ],
      [
        {
          name: "web",
          transport: "http",
          url: "https://x.example",
          token: "a",
          headers: { Authorization: "b" },
        },
        "not both",
      ],
      [{ name: "web", transport: "stdio" }, "body.command: a stdio server needs a command"],
      [{ name: "web", transport: "stdio", command: "node", url: "https://x.example" }, "only an http server"],
      [{ name: "web", transport: "http", url: "https://x.example", command: "node" }, "only a stdio server"],
      [{ name: "web", transport: "carrier-pigeon" }, "transport"],
    ] as const) {
      const answer = await post(body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.body.message).toContain(says);
    }
    expect(
      (await t.json<{ servers: unknown[] }>("/api/chat/mcp-servers", { headers: asUser("ann") })).body
        .servers,
    ).toEqual([]);

    const added = await post({
      name: "web",
      transport: "http",
      url: "https://mcp.example.com/mcp",
      token: SECRET,
      headers: { "X-Team": `team-${SECRET}` },
      approval: "allow",
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({
      name: "web",
      scope: "user",
      transport: "http",
      url: "https://mcp.example.com/mcp",
      args: [],
      headerNames: ["X-Team", "Authorization"],
      hasToken: true,
      approval: "allow",
      enabled: true,
    } as never);
    const stdio = await post({ name: "files", transport: "stdio", command: "node", args: ["fs.mjs", "."] });
    expect(stdio.status).toBe(200);
    const listed = await t.request("/api/chat/mcp-servers", { headers: asUser("ann") });
    const text = await listed.text();
    expect(JSON.parse(text).servers.map((s: { name: string }) => s.name)).toEqual(["files", "web"]);
    expect(text).not.toContain(SECRET);
    expect(JSON.stringify(added.body)).not.toContain(SECRET);
    expect(logs.text()).not.toContain(SECRET);
    // The other user sees none of them and cannot remove them.
    expect(
      (await t.json<{ servers: unknown[] }>("/api/chat/mcp-servers", { headers: asUser("bob") })).body
        .servers,
    ).toEqual([]);
    const bobRemoves = await t.json("/api/chat/mcp-servers/web", {
      method: "DELETE",
      headers: asUser("bob"),
    });
    expect(bobRemoves.body).toEqual({ removed: false });
    expect((await t.json("/api/chat/mcp-servers/web/tools", { headers: asUser("bob") })).status).toBe(404);
    const annRemoves = await t.json("/api/chat/mcp-servers/web", {
      method: "DELETE",
      headers: asUser("ann"),
    });
    expect(annRemoves.body).toEqual({ removed: true });
    expect(
      (await t.json("/api/chat/mcp-servers/NOPE", { method: "DELETE", headers: asUser("ann") })).status,
    ).toBe(400);
  });

  test("the operator's servers (policy mcp.servers) are everyone's, secrets by variable, names reserved", async () => {
    const policy = policyVariant(
      [],
      `[[defaults.mcp.servers]]
name = "company"
url = "https://mcp.company.example/mcp"
token_env = "COMPANY_MCP_TOKEN"
approval = "allow"
`,
    );
    stops.push(policy.remove);
    const t = await app(twoUsers({ policyPath: policy.path, env: { COMPANY_MCP_TOKEN: SECRET } }));
    for (const user of ["ann", "bob"]) {
      const listed = await t.request("/api/chat/mcp-servers", { headers: asUser(user) });
      const text = await listed.text();
      expect(JSON.parse(text).servers).toEqual([
        {
          name: "company",
          scope: "admin",
          transport: "http",
          url: "https://mcp.company.example/mcp",
          args: [],
          headerNames: ["Authorization"],
          hasToken: true,
          approval: "allow",
          enabled: true,
        },
      ]);
      expect(text).not.toContain(SECRET);
    }
    const taken = await t.json<{ message: string }>(
      "/api/chat/mcp-servers",
      postJson({ name: "company", transport: "http", url: "https://evil.example/mcp" }, asUser("ann")),
    );
    expect(taken.status).toBe(409);
    expect(taken.body.message).toContain("configured by the operator");
    // Read-only for a user: no change, no removal.
    const changed = await t.json<{ message: string }>("/api/chat/mcp-servers/company", {
      method: "PATCH",
      headers: { ...asUser("ann"), "content-type": "application/json" },
      body: JSON.stringify({ approval: "ask" }),
    });
    expect(changed.status).toBe(409);
    expect(changed.body.message).toContain("configured by the operator");
    const after = await t.json<{ servers: { approval: string }[] }>("/api/chat/mcp-servers", {
      headers: asUser("ann"),
    });
    expect(after.body.servers[0]?.approval).toBe("allow");
  });

  test("PATCH sets approval or enabled and keeps the stored secrets; bad input changes nothing", async () => {
    const t = await app(twoUsers());
    const patch = (name: string, body: unknown, user = "ann") =>
      t.json<Record<string, unknown> & { message: string }>(`/api/chat/mcp-servers/${name}`, {
        method: "PATCH",
        headers: { ...asUser(user), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const added = await t.json(
      "/api/chat/mcp-servers",
      postJson(
        { name: "web", transport: "http", url: "https://mcp.example.com/mcp", token: SECRET },
        asUser("ann"),
      ),
    );
    expect(added.status).toBe(200);
    const allowed = await patch("web", { approval: "allow" });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ approval: "allow", enabled: true, hasToken: true });
    expect(JSON.stringify(allowed.body)).not.toContain(SECRET);
    expect((await patch("web", { enabled: false })).body).toMatchObject({
      approval: "allow",
      enabled: false,
    });
    // The secret is still stored (what a call would send), never shown.
    expect((await t.ctx.mcp.config("ann", "web")).headers).toEqual({ Authorization: `Bearer ${SECRET}` });
    for (const [body, status] of [
      [{}, 400],
      [{ approval: "sometimes" }, 400],
      [{ url: "https://evil.example/mcp" }, 400],
      [{ enabled: "yes" }, 400],
    ] as const) {
      const answer = await patch("web", body);
      expect({ body, status: answer.status }).toEqual({ body, status });
    }
    expect((await patch("nope", { approval: "ask" })).status).toBe(404);
    expect((await patch("web", { approval: "ask" }, "bob")).status).toBe(404);
    expect(await t.ctx.mcp.config("ann", "web")).toMatchObject({
      url: "https://mcp.example.com/mcp",
      approval: "allow",
      enabled: false,
    });
  });
});

/** A loopback HTTP server that counts the TCP connections it accepts. */
async function counting(): Promise<{ url: string; connections(): number }> {
  let connections = 0;
  const server = createServer((_req, res) => res.end("{}"));
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stops.push(() => server.close());
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    connections: () => connections,
  };
}

describe("server-everything over Streamable HTTP on loopback", () => {
  test("local mode: a user's loopback server is reached; its tools are listed and called", async () => {
    const everything = await everythingOverHttp();
    stops.push(everything.stop);
    const t = await app();
    const added = await t.json(
      "/api/chat/mcp-servers",
      postJson({ name: "everything", transport: "http", url: everything.url }),
    );
    expect(added.status).toBe(200);
    const tools = await t.json<{ tools: { name: string }[] }>("/api/chat/mcp-servers/everything/tools");
    expect(tools.status).toBe(200);
    expect(tools.body.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-sum"]));
    const echoed = await t.ctx.mcp.call("local", "everything", "echo", { message: "hello over http" });
    expect(echoed).toMatchObject({ isError: false, text: "Echo: hello over http" });
    const sum = await t.ctx.mcp.call("local", "everything", "get-sum", { a: 2, b: 40 });
    expect(sum.text).toContain("42");
    // A tool's own error is a result with isError, not a crash.
    const bad = await t.ctx.mcp.call("local", "everything", "get-sum", { a: "x" });
    expect(bad.isError).toBe(true);
  });

  test("a team server refuses a user's loopback URL before connecting, unless the operator allows it", async () => {
    const listening = await counting();
    const t = await app(twoUsers());
    await t.json(
      "/api/chat/mcp-servers",
      postJson({ name: "local", transport: "http", url: listening.url }, asUser("ann")),
    );
    const refused = await t.json<{ message: string }>("/api/chat/mcp-servers/local/tools", {
      headers: asUser("ann"),
    });
    expect(refused.status).toBe(502);
    expect(refused.body.message).toContain("127.0.0.1 is not a public address");
    expect(refused.body.message).toContain("APP_OUTBOUND_ALLOW");
    await expect(t.ctx.mcp.call("ann", "local", "echo", {})).rejects.toThrow("not a public address");
    expect(listening.connections()).toBe(0);

    const everything = await everythingOverHttp();
    stops.push(everything.stop);
    const allowed = await app(twoUsers({ env: { APP_OUTBOUND_ALLOW: new URL(everything.url).origin } }));
    await allowed.json(
      "/api/chat/mcp-servers",
      postJson({ name: "everything", transport: "http", url: everything.url }, asUser("ann")),
    );
    const echoed = await allowed.ctx.mcp.call("ann", "everything", "echo", { message: "allowed" });
    expect(echoed.text).toBe("Echo: allowed");
  });
});
