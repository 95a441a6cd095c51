/**
 * The MCP SDK's client side, loaded when an owner's MCP server is first connected (clients.ts), not
 * when the server starts: evaluating the SDK (its JSON-RPC schemas) costs a start-up ~200 ms of CPU
 * that a server with no MCP servers in use never needs. tests/foundation/lazy-start.test.ts fails if a
 * static import of it comes back on the start path.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { SandboxStdioTransport, shellLine } from "./sandbox-transport.ts";
