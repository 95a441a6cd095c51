/** The official MCP SDK's client, unchanged, connected to a live Atrium's /mcp (tests/mcp/*). */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

export async function connectMcp(url: string, headers: Record<string, string> = {}): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: "atrium-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** The text of a tool result's text parts, joined. */
export function textOf(result: unknown): string {
  const parts = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[];
  return parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}
