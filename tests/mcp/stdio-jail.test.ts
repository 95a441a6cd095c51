/**
 * Stdio MCP servers run inside the user's own sandbox (the per-user jail), never in the server process:
 * server-everything bundled into ann's workspace answers its tools from there (and sees no variable of the
 * server's); server-filesystem is confined to the workspace the jail shows (a file it writes lands in
 * ann's workspace folder; the host's files and bob's workspace are not there to read); a command not
 * installed in the sandbox fails with a sentence saying so. A hostile server is bounded: an oversized
 * message ends it, endless progress and a tool that never answers end at the call's time limit with the
 * progress passed on capped, a long result is cut, and what it probes of the host finds nothing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { descendants } from "../helpers/jail.ts";
import { bundled, HOSTILE_SERVER, installInWorkspace } from "../helpers/mcp.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

setDefaultTimeout(120_000);

const HOST_SECRET = "host-secret-e4b1c9";
const BOB_SECRET = "bob-private-77aa01";
let t: TestApp;
let hostFile: string;
let bobFile: string;

beforeAll(async () => {
  t = await createTestApp(twoUsers({ env: { APP_TEST_SECRET: HOST_SECRET } }));
  expect(t.family("chat").runtime.sandboxes.availability().available).toBe(true);
  installInWorkspace(t.dataDir, "ann", await bundled("server-everything"), "everything.mjs");
  installInWorkspace(t.dataDir, "ann", await bundled("server-filesystem"), "filesystem.mjs");
  installInWorkspace(t.dataDir, "ann", HOSTILE_SERVER, "hostile.mjs");
  hostFile = join(t.dataDir, "host-secret.txt");
  writeFileSync(hostFile, HOST_SECRET);
  const bobWorkspace = ownerFolders(t.dataDir, "bob").workspace;
  mkdirSync(bobWorkspace, { recursive: true });
  bobFile = join(bobWorkspace, "private.txt");
  writeFileSync(bobFile, BOB_SECRET);
  for (const [name, args] of [
    ["everything", ["everything.mjs", "stdio"]],
    ["files", ["filesystem.mjs", "/home/atrium/agent-workspace"]],
    ["hostile", ["hostile.mjs"]],
  ] as const) {
    const added = await t.json(
      "/api/chat/mcp-servers",
      postJson({ name, transport: "stdio", command: "node", args }, asUser("ann")),
    );
    expect(added.status).toBe(200);
  }
});
afterAll(async () => {
  await t.close();
});

describe("a stdio MCP server in the user's sandbox", () => {
  test("server-everything answers from inside the jail and sees none of the server's variables", async () => {
    const tools = await t.json<{ tools: { name: string }[] }>("/api/chat/mcp-servers/everything/tools", {
      headers: asUser("ann"),
    });
    expect(tools.status).toBe(200);
    expect(tools.body.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-env"]));
    expect(await t.ctx.mcp.call("ann", "everything", "echo", { message: "from the jail" })).toMatchObject({
      text: "Echo: from the jail",
      isError: false,
    });
    const env = await t.ctx.mcp.call("ann", "everything", "get-env", {});
    expect(env.text).toContain('"HOME": "/home/atrium"');
    expect(env.text).not.toContain(HOST_SECRET);
    // It runs as a process of ann's jail, not of the server.
    const jail = (t.family("chat").runtime.sandboxes as LocalSandboxProvider).jailPid("ann") as number;
    const inJail = descendants(jail).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("everything.mjs");
      } catch {
        return false;
      }
    });
    expect(inJail.length).toBeGreaterThan(0);
  });

  test("server-filesystem is confined to the workspace the jail shows", async () => {
    const wrote = await t.ctx.mcp.call("ann", "files", "write_file", {
      path: "/home/atrium/agent-workspace/from-mcp.txt",
      content: "written by an MCP tool",
    });
    expect(wrote.isError).toBe(false);
    expect(readFileSync(join(ownerFolders(t.dataDir, "ann").workspace, "from-mcp.txt"), "utf8")).toBe(
      "written by an MCP tool",
    );
    const outside = await t.ctx.mcp.call("ann", "files", "read_text_file", { path: bobFile });
    expect(outside.isError).toBe(true);
    expect(outside.text).not.toContain(BOB_SECRET);
  });

  test("a hostile server probing the host finds neither the host's files nor bob's workspace", async () => {
    const probed = await t.ctx.mcp.call("ann", "hostile", "probe", {
      paths: [hostFile, bobFile, t.dataDir, "/proc/1/environ", "/etc/shadow"],
    });
    expect(probed.text).not.toContain(HOST_SECRET);
    expect(probed.text).not.toContain(BOB_SECRET);
    expect(probed.text).toContain(`${hostFile}: ENOENT`);
    expect(probed.text).toContain(`${bobFile}: ENOENT`);
    const env = await t.ctx.mcp.call("ann", "hostile", "env", {});
    expect(env.text).not.toContain(HOST_SECRET);
  });

  test("a command not installed in the sandbox fails with a clear sentence", async () => {
    await t.json(
      "/api/chat/mcp-servers",
      postJson({ name: "missing", transport: "stdio", command: "mcp-server-nowhere" }, asUser("ann")),
    );
    const missing = await t.json<{ message: string }>("/api/chat/mcp-servers/missing/tools", {
      headers: asUser("ann"),
    });
    expect(missing.status).toBe(502);
    expect(missing.body.message).toBe(
      "MCP server 'missing': 'mcp-server-nowhere' is not installed in your sandbox (command not found)",
    );
  });
});

describe("a hostile stdio server is bounded", () => {
  test("a result past the cap is cut; an oversized message ends the server", async () => {
    const { limits } = t.ctx.mcp;
    const long = await t.ctx.mcp.call("ann", "hostile", "big_text", { chars: limits.maxResultChars + 5000 });
    expect(long.truncated).toBe(true);
    expect(long.text.length).toBeLessThan(limits.maxResultChars + 100);
    await expect(
      t.ctx.mcp.call("ann", "hostile", "huge", { bytes: limits.maxMessageBytes + 1024 }),
    ).rejects.toThrow("MCP server 'hostile'");
    // The next call starts the server again.
    const again = await t.ctx.mcp.call("ann", "hostile", "big_text", { chars: 3 });
    expect(again.text).toBe("xxx");
  });

  test("endless progress and a tool that never answers end at the call's time limit", async () => {
    const { limits } = t.ctx.mcp;
    const saved = { ...limits };
    limits.callTimeoutMs = 3000;
    limits.maxProgress = 5;
    try {
      let passed = 0;
      await expect(
        t.ctx.mcp.call("ann", "hostile", "flood", {}, { onProgress: () => passed++ }),
      ).rejects.toThrow("more than 50 progress notifications");
      expect(passed).toBe(5);
      // A flood far past the cap ends the call at once; a slow one still ends at the time limit.
      limits.maxProgress = 100_000;
      await expect(t.ctx.mcp.call("ann", "hostile", "flood", {})).rejects.toThrow("timed out");
      await expect(t.ctx.mcp.call("ann", "hostile", "hang", {})).rejects.toThrow("timed out");
    } finally {
      Object.assign(limits, saved);
    }
  });
});
