/**
 * Atrium as an MCP server at `/mcp` (DESIGN ruling 14, docs/mcp.md): the MCP Streamable HTTP transport
 * of the official SDK (`WebStandardStreamableHTTPServerTransport`), the protocol version negotiated as
 * the SDK does. Everything before it is the app's: the Host/Origin guard of the local surface, the body
 * limit, and the identity (in protected mode a credential, and of an access token the `mcp` scope).
 *
 * Sessions: `initialize` opens one (an `Mcp-Session-Id`); its server lives in this process until the
 * client deletes it, it idles for 30 minutes, or its owner opens more than 16 (the oldest goes; 256
 * in all). A session belongs to the owner who opened it: another owner's requests with its id get
 * 404, as an unknown id does. This folder depends on the HTTP surface only (http.ts), never a family.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Elysia } from "elysia";
import type { Identity, identityPlugin } from "../auth/identity.ts";
import { MCP_PATH } from "../auth/scopes.ts";
import type { Logger } from "../log.ts";
import { forwardedHeaders, type Handle } from "./http.ts";
import { type CallerInfo, createMcpServer } from "./server.ts";

const IDLE_MS = 30 * 60_000;
const PER_OWNER = 16;
const IN_ALL = 256;

interface Session {
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
}

export interface McpOptions {
  /** The composed app's `handle`: how tools reach the families' routes. */
  handle: Handle;
  identity: ReturnType<typeof identityPlugin>;
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
      return session.transport.handleRequest(request, { authInfo });
    }
    // No session: only an initialize may come (the transport answers anything else with its 400).
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.makeRoom(owner);
        this.sessions.set(sessionId, { owner, transport, lastUsed: Date.now() });
      },
      onsessionclosed: (sessionId) => void this.sessions.delete(sessionId),
    });
    const server = createMcpServer(this.options.handle);
    server.onerror = (error) => this.options.log.debug("mcp server error", { error: String(error) });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { authInfo });
    if (!transport.sessionId) await transport.close();
    return response;
  }

  /** Closes every session (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
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

/** The SDK's own answer for an unknown session, so clients start a new one. */
function notFound(): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
    { status: 404 },
  );
}

export function mcpRoutes(sessions: McpSessions, identity: McpOptions["identity"]) {
  const serve = ({ request, identity: caller }: { request: Request; identity: Identity | undefined }) =>
    sessions.handle(request, caller);
  const detail = {
    tags: ["mcp"],
    summary:
      "Atrium's MCP server (Streamable HTTP): tools and resources over the caller's own data (docs/mcp.md)",
  };
  return new Elysia({ name: "atrium/mcp" })
    .use(identity)
    .post(MCP_PATH, serve, { parse: "none", detail })
    .get(MCP_PATH, serve, { detail })
    .delete(MCP_PATH, serve, { detail });
}
