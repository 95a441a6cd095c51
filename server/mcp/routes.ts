/**
 * Atrium as an MCP server at `/mcp` (docs/mcp.md): the MCP Streamable HTTP transport
 * of the official SDK (`WebStandardStreamableHTTPServerTransport`), the protocol version negotiated as
 * the SDK does. Everything before it is the app's: the Host/Origin guard of the local surface, the body
 * limit, and the identity (in protected mode a credential, and of an access token the `mcp` scope).
 *
 * In protected mode /mcp takes a personal access token only (with the `mcp` scope, checked with the
 * other scopes before routing): a browser's cookie or another bearer credential gets 403, so no page
 * the user visits can drive the tools with the cookie it carries, and what a client may do is what the
 * token's scopes say.
 *
 * Sessions: `initialize` opens one (an `Mcp-Session-Id`); its server lives in this process until the
 * client deletes it, it idles for 30 minutes, its credential is revoked or expires (LiveConnections
 * closes it and its streams), or its owner opens more than 16 (the oldest goes; 256 in all). A session
 * belongs to the owner who opened it: another owner's requests with its id get 404, as an unknown id
 * does. A message body is read up to 8 MiB (413 past it), whatever the app's upload limit.
 * This folder depends on the HTTP surface only (http.ts), never a family.
 * The SDK (server.ts and the transport) loads with the first request that opens a session, not when the
 * server starts: a start would otherwise pay ~200 ms of CPU for it (tests/foundation/lazy-start.test.ts).
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Elysia } from "elysia";
import type { Identity, identityPlugin } from "../auth/identity.ts";
import type { LiveConnections } from "../auth/live-connections.ts";
import { readCappedJson } from "../http/capped-body.ts";
import type { Logger } from "../log.ts";
import { forwardedHeaders, type Handle } from "./http.ts";
import type { CallerInfo } from "./server.ts";

const IDLE_MS = 30 * 60_000;
const PER_OWNER = 16;
const IN_ALL = 256;
/** The largest JSON-RPC message read (a write_file of 5 MB of text fits, escaped). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

interface Session {
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
  /** Stops watching the credential that opened it. */
  release: () => void;
}

export interface McpOptions {
  /** The composed app's `handle`: how tools reach the families' routes. */
  handle: Handle;
  identity: ReturnType<typeof identityPlugin>;
  /** Protected mode: only personal access tokens reach /mcp. */
  tokensOnly: boolean;
  /** Ends sessions and streams whose credential is revoked. */
  connections: LiveConnections;
  log: Logger;
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(private readonly options: McpOptions) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref?.();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request, identity: Identity | undefined): Promise<Response> {
    if (this.options.tokensOnly && identity?.kind !== "token")
      return rpcError(
        403,
        -32001,
        "Atrium's MCP server takes a personal access token with the mcp scope (Authorization: Bearer atr_…): create one in Settings or with `atrium token create`",
      );
    const body = request.method === "POST" ? await readMessage(request) : undefined;
    if (body instanceof Response) return body;
    const response = await this.serve(request, identity, body);
    return revocable(identity) ? this.options.connections.holdStream(response, identity) : response;
  }

  private async serve(request: Request, identity: Identity | undefined, parsedBody: unknown) {
    const owner = identity?.id ?? "local";
    const info: CallerInfo = {
      caller: {
        origin: new URL(request.url).origin,
        headers: forwardedHeaders(request),
        signal: request.signal,
      },
      scopes: identity?.scopes,
    };
    const authInfo = {
      token: "",
      clientId: owner,
      scopes: [...(identity?.scopes ?? [])],
      extra: { atrium: info },
    };
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const session = this.sessions.get(id);
      if (!session || session.owner !== owner) return notFound();
      session.lastUsed = Date.now();
      return session.transport.handleRequest(request, { authInfo, parsedBody });
    }
    // No session: only an initialize may come (the transport answers anything else with its 400).
    const { WebStandardStreamableHTTPServerTransport, createMcpServer } = await import("./server.ts");
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.makeRoom(owner);
        const release = revocable(identity)
          ? this.options.connections.hold(identity, () => this.drop(sessionId))
          : () => {};
        this.sessions.set(sessionId, { owner, transport, lastUsed: Date.now(), release });
      },
      // The client's DELETE: the transport closes itself.
      onsessionclosed: (sessionId) => {
        this.sessions.get(sessionId)?.release();
        this.sessions.delete(sessionId);
      },
    });
    const server = createMcpServer(this.options.handle);
    server.onerror = (error) => this.options.log.debug("mcp server error", { error: String(error) });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { authInfo, parsedBody });
    if (!transport.sessionId) await transport.close();
    return response;
  }

  /** Closes every session (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    for (const session of open) session.release();
    await Promise.all(open.map((s) => s.transport.close().catch(() => {})));
  }

  private makeRoom(owner: string): void {
    const mine = [...this.sessions].filter(([, s]) => s.owner === owner);
    if (mine.length >= PER_OWNER) this.drop(oldest(mine));
    if (this.sessions.size >= IN_ALL) this.drop(oldest([...this.sessions]));
  }

  private drop(id: string | undefined): void {
    const session = id === undefined ? undefined : this.sessions.get(id);
    if (!session || id === undefined) return;
    this.sessions.delete(id);
    session.release();
    session.transport.close().catch(() => {});
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) if (now - session.lastUsed > IDLE_MS) this.drop(id);
  }
}

function oldest(entries: [string, Session][]): string | undefined {
  return entries.sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0]?.[0];
}

/** A credential that can be revoked (the local user's cannot). */
const revocable = (identity: Identity | undefined): identity is Identity =>
  identity !== undefined && identity.kind !== "local";

/** A JSON-RPC error answer, as the SDK's transport writes its own. */
function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

/** The SDK's own answer for an unknown session, so clients start a new one. */
const notFound = () => rpcError(404, -32001, "Session not found");

/**
 * The JSON of a POST body read up to MAX_MESSAGE_BYTES (chunked bodies included), or the error
 * answer: 413 past the cap, the SDK's parse error (-32700) for what is not JSON.
 */
async function readMessage(request: Request): Promise<unknown> {
  const read = await readCappedJson(request, MAX_MESSAGE_BYTES);
  if (read.ok) return read.value;
  return read.reason === "too_large"
    ? rpcError(413, -32600, `An MCP message is limited to ${MAX_MESSAGE_BYTES} bytes`)
    : rpcError(400, -32700, "Parse error: the body is not JSON");
}

export function mcpRoutes(sessions: McpSessions, identity: McpOptions["identity"]) {
  const serve = ({ request, identity: caller }: { request: Request; identity: Identity | undefined }) =>
    sessions.handle(request, caller);
  const detail = {
    tags: ["mcp"],
    summary:
      "Atrium's MCP server (Streamable HTTP): tools and resources over the caller's own data (docs/mcp.md)",
    description:
      "JSON-RPC 2.0 messages of the Model Context Protocol, as the official SDK's transport speaks them: POST a message (`initialize` opens a session, `Mcp-Session-Id`), GET a session's server-to-client stream, DELETE a session. On a team server: a personal access token with the `mcp` scope only.",
    responses: {
      200: {
        description: "A JSON-RPC answer, or an SSE stream of them (`Accept` decides, as MCP says)",
        content: {
          "application/json": { schema: { type: "object" as const, additionalProperties: true } },
          "text/event-stream": { schema: { type: "string" as const } },
        },
      },
    },
  };
  return new Elysia({ name: "atrium/mcp" })
    .use(identity)
    .post("/mcp", serve, { parse: "none", detail })
    .get("/mcp", serve, { detail })
    .delete("/mcp", serve, { detail });
}
