/**
 * MCP clients other than our own code, unchanged, against a live team server on loopback: the SDK's
 * stdio client launching `atrium mcp` (which forwards to /mcp with APP_TOKEN), and the MCP Inspector's
 * CLI mode over Streamable HTTP with a bearer header and over stdio through `atrium mcp`. What they do
 * lands in the token owner's files, as over HTTP; a refused token is a clear error, never a hang.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import { postJson, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { cleanEnv, MAIN } from "../helpers/server.ts";
import { runCli } from "../helpers/terminal.ts";
import { tempDir } from "../helpers/tmp.ts";
import { textOf } from "./client.ts";

setDefaultTimeout(90_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let ann: SignedUser;
let token: string;
const home = tempDir("atrium-mcp-clients-");
const INSPECTOR = join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
);

beforeAll(async () => {
  t = await authApp();
  server = listen(t);
  ann = await signUp(t, "ann@example.org");
  const created = await t.json<{ token: string }>(
    "/api/auth/tokens",
    postJson({ name: "mcp clients", scopes: ["mcp", "turns", "search:read"] }, ann.bearer),
  );
  token = created.body.token;
});
afterAll(async () => {
  await server.stop();
  await t.close();
  home.remove();
});

const fileOfAnn = async (path: string) =>
  (await t.json<{ content: string }>(`/api/files/content?path=${path}`, { headers: ann.bearer })).body
    .content;

function stdioClient(appToken: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "mcp", "--url", server.url],
    env: cleanEnv({ APP_TOKEN: appToken, HOME: home.path }),
    stderr: "pipe",
  });
  return { transport, client: new Client({ name: "stdio-test", version: "1.0.0" }) };
}

test("the SDK's stdio client drives `atrium mcp`, which forwards to /mcp with the token", async () => {
  const { client, transport } = stdioClient(token);
  await client.connect(transport);
  expect(client.getServerVersion()).toMatchObject({ name: "atrium" });
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual([
    "list_indexes",
    "run_python",
    "list_files",
    "read_file",
    "write_file",
  ]);
  const written = await client.callTool({
    name: "write_file",
    arguments: { path: "from-stdio.txt", content: "via atrium mcp" },
  });
  expect(written.isError).toBeFalsy();
  expect(await fileOfAnn("from-stdio.txt")).toBe("via atrium mcp");
  expect(textOf(await client.callTool({ name: "read_file", arguments: { path: "from-stdio.txt" } }))).toBe(
    "via atrium mcp",
  );
  await client.close();
});

test("`atrium mcp` with a bad token answers the client's requests with the server's refusal", async () => {
  let stderr = "";
  const { client, transport } = stdioClient("atr_aaaaaaaaaaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await expect(client.connect(transport)).rejects.toThrow(/Authentication required/);
  await client.close();
  expect(stderr).toContain(`atrium mcp: ${server.url}/mcp`);
  expect(stderr).not.toContain("bbbbbbbb");
});

async function inspector(args: string[]) {
  const proc = Bun.spawn(["node", INSPECTOR, "--cli", ...args], {
    cwd: home.path,
    env: cleanEnv({ HOME: home.path, MCP_CATALOG_PATH: join(home.path, "catalog.json") }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

test("the MCP Inspector's CLI mode over Streamable HTTP with a bearer header", async () => {
  const http = [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${token}`];
  const listed = await inspector([...http, "--method", "tools/list"]);
  expect(listed.code).toBe(0);
  const names = (JSON.parse(listed.out) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
  expect(names).toEqual(["list_indexes", "run_python", "list_files", "read_file", "write_file"]);

  const called = await inspector([
    ...http,
    "--method",
    "tools/call",
    "--tool-name",
    "write_file",
    "--tool-arg",
    "path=inspected.txt",
    "content=written by the inspector",
  ]);
  expect(called.code).toBe(0);
  expect(JSON.parse(called.out).isError).toBeFalsy();
  expect(await fileOfAnn("inspected.txt")).toBe("written by the inspector");

  const resource = await inspector([
    ...http,
    "--method",
    "resources/read",
    "--uri",
    "atrium://files/inspected.txt",
  ]);
  expect(resource.code).toBe(0);
  expect(JSON.parse(resource.out).contents[0].text).toBe("written by the inspector");

  const refused = await inspector([`${server.url}/mcp`, "--transport", "http", "--method", "tools/list"]);
  expect(refused.code).not.toBe(0);
  // No token: refused (the inspector then offers OAuth, which Atrium does not speak), never served.
  expect(`${refused.out}${refused.err}`).toContain('"code":"auth_required"');
});

test("the MCP Inspector's CLI mode over stdio through `atrium mcp`", async () => {
  // Options before `--`; the command and its own arguments after it.
  const listed = await inspector([
    "-e",
    `APP_TOKEN=${token}`,
    "--method",
    "tools/list",
    "--",
    process.execPath,
    MAIN,
    "mcp",
    "--url",
    server.url,
  ]);
  expect(listed.err).toBe("");
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.out).tools).toHaveLength(5);
});

test("`atrium mcp` refuses a bad URL or flag with a usage line, and writes nothing on stdout", async () => {
  const badUrl = await runCli(["mcp", "--url", "ftp://127.0.0.1/"]);
  expect(badUrl).toMatchObject({ code: 1, stdout: "" });
  expect(badUrl.stderr).toContain("atrium mcp: invalid_url: not an http(s) URL");
  const badFlag = await runCli(["mcp", "--token", "atr_x"]);
  expect(badFlag.code).toBe(2);
  expect(badFlag.stdout).toBe("");
  expect(badFlag.stderr).toContain("Usage: atrium mcp");
});
