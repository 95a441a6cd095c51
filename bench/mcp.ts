import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { liveApp } from "./lib/live-app.ts";
import { fmt, median, percentile, sample } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "200" }, rounds: { type: "string", default: "5" } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);

const live = await liveApp("mcp");
const { app, base } = live;

const put = await fetch(`${base}/api/files/content`, {
  method: "PUT",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ path: "bench.txt", content: "x".repeat(4096) }),
});
if (!put.ok) throw new Error(`could not write the file: ${put.status}`);

const client = new Client({ name: "atrium-bench", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
await client.connect(transport);
const rawHeaders = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-session-id": transport.sessionId as string,
  "mcp-protocol-version": transport.protocolVersion as string,
};

async function http(path: string) {
  const response = await fetch(`${base}${path}`);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  await response.arrayBuffer();
}
async function tool(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
}

/** The same tools/call as a bare POST: the server's part of the cost. */
async function raw(name: string, args: Record<string, unknown>) {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } };
  const response = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: rawHeaders,
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok || text.includes('"isError":true')) throw new Error(`${name}: ${text.slice(0, 200)}`);
}

const calls = [
  { name: "read_file", args: { path: "bench.txt" }, route: "/api/files/content?path=bench.txt" },
  { name: "list_indexes", args: {}, route: "/search/indexes" },
];
const pairs = calls.flatMap((c) => [
  { name: `${c.name} (SDK)`, mcp: () => tool(c.name, c.args), http: () => http(c.route) },
  { name: `${c.name} (raw)`, mcp: () => raw(c.name, c.args), http: () => http(c.route) },
]);

// Warm both paths (JIT, the first session's server, SQLite's statement cache).
for (const pair of pairs) {
  await sample(pair.mcp, 20);
  await sample(pair.http, 20);
}

console.log(`MCP tool call through /mcp ÷ the same call over its HTTP route (${N} calls × ${ROUNDS} rounds)`);
for (const pair of pairs) {
  const mcp: number[] = [];
  const direct: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const m = await sample(pair.mcp, N);
    const h = await sample(pair.http, N);
    mcp.push(...m);
    direct.push(...h);
    ratios.push(median(m) / median(h));
  }
  console.log(
    `${pair.name.padEnd(20)} mcp p50 ${fmt(median(mcp), 2)} ms p99 ${fmt(percentile(mcp, 99), 2)} ms | http p50 ${fmt(median(direct), 2)} ms p99 ${fmt(percentile(direct, 99), 2)} ms | ratio ${fmt(median(mcp) / median(direct), 2)} (rounds ${ratios.map((r) => fmt(r, 2)).join(" ")})`,
  );
}

await client.close();
await app.elysia.server?.stop(true);
await live.close();
