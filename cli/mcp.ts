/**
 * `atrium mcp`: Atrium's MCP server for MCP clients that launch a command (desktop assistants, editors).
 * It speaks MCP over stdio and forwards every message, unchanged, to a server's `/mcp` over Streamable
 * HTTP (the official SDK's two transports back to back), with the access token in `APP_TOKEN` as its
 * bearer. stdout carries only MCP messages; what goes wrong is said on stderr, and a request the server
 * did not take (refused, unreachable) is answered with a JSON-RPC error so the client never waits.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { baseUrlOf } from "./api.ts";
import { parse, runCommand } from "./args.ts";
import { clean } from "./style.ts";

export const USAGE = `Usage: atrium mcp [--url URL]

Serves MCP on stdin/stdout, forwarding to URL/mcp (Streamable HTTP).
  --url URL   the Atrium server (default: $APP_BASE_URL, else http://127.0.0.1:8000)

APP_TOKEN   a personal access token with the mcp scope (and the scopes of the tools you want);
            a team server needs one, a local server on loopback none. See docs/mcp.md.
`;

/** JSON-RPC's code for a server error the client should show (the SDK's ConnectionClosed is -32000). */
const FORWARD_FAILED = -32000;

export function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  return runCommand("mcp", USAGE, async () => {
    const { values } = parse(argv, { url: { type: "string" }, help: { type: "boolean", short: "h" } });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    const base = baseUrlOf(values.url, env);
    const headers: Record<string, string> = env.APP_TOKEN ? { authorization: `Bearer ${env.APP_TOKEN}` } : {};
    // Redirects are not followed: the token goes to the server it was given for, nowhere else.
    const remote = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers, redirect: "error" },
    });
    const local = new StdioServerTransport();
    await forward(local, remote, base);
    return 0;
  });
}

/** Forwards messages both ways until stdin ends (then the remote session is ended too). */
async function forward(local: StdioServerTransport, remote: StreamableHTTPClientTransport, base: string) {
  const initializing = new Set<string | number>();
  const say = (text: string) => process.stderr.write(clean(`atrium mcp: ${text}\n`));
  local.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === "initialize") initializing.add(message.id);
    remote.send(message).catch((error: Error) => {
      say(`${base}/mcp: ${error.message}`);
      if (!isJSONRPCRequest(message)) return;
      const reply = { code: FORWARD_FAILED, message: `Atrium at ${base}: ${error.message}` };
      local.send({ jsonrpc: "2.0", id: message.id, error: reply }).catch(() => {});
    });
  };
  remote.onmessage = (message: JSONRPCMessage) => {
    // The negotiated version goes on every later HTTP request, as the SDK's own client does.
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") remote.setProtocolVersion(version);
    }
    local.send(message).catch(() => {});
  };
  remote.onerror = (error) => say(error.message);
  const closed = new Promise<void>((resolve) => {
    local.onclose = resolve;
    process.stdin.once("end", resolve);
  });
  await remote.start();
  await local.start();
  await closed;
  await remote.terminateSession().catch(() => {});
  await remote.close().catch(() => {});
  await local.close().catch(() => {});
}
