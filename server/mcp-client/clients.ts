/**
 * The MCP client service every family uses (docs/mcp-tools.md): the servers an owner may use (the
 * operator's for everyone, then the owner's own), one SDK Client per owner and server kept while used,
 * and tool calls with the bounds a hostile server needs: a time limit per call that progress does not
 * extend, at most `maxProgress` progress notifications passed on, a result cut to `maxResultChars`, each
 * message capped in bytes (http-fetch.ts, sandbox-transport.ts), a capped tool list with capped schemas.
 *
 * Where a server runs: an HTTP server is reached through the outbound rule (http-fetch.ts); a stdio
 * server runs in the owner's own sandbox (sandbox-transport.ts), never in the server process.
 * The SDK itself loads with the first connection (sdk.ts), so a server start does not pay for it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  McpServerBody,
  McpServerInfo,
  McpServerUpdate,
  McpToolInfo,
} from "../../schemas/mcp-servers.ts";
import { AppError } from "../http/errors.ts";
import type { OutboundRule } from "../http/outbound/rule.ts";
import type { Logger } from "../log.ts";
import type { SandboxProvider } from "../sandbox/users/provider-api.ts";
import type { Db } from "../storage/db/port.ts";
import { outboundFetchLike } from "./http-fetch.ts";
import { type McpServerConfig, publicInfo, userServer } from "./servers.ts";
import { McpServerStore } from "./store.ts";

export interface McpLimits {
  connectTimeoutMs: number;
  callTimeoutMs: number;
  maxResultChars: number;
  maxMessageBytes: number;
  maxProgress: number;
  maxTools: number;
  maxSchemaChars: number;
  /** A connection unused this long is closed (a stdio server's process ends). */
  idleMs: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  connectTimeoutMs: 30_000,
  callTimeoutMs: 120_000,
  maxResultChars: 100_000,
  maxMessageBytes: 4 * 1024 * 1024,
  maxProgress: 100,
  maxTools: 128,
  maxSchemaChars: 16_384,
  idleMs: 10 * 60_000,
};

/** Progress notifications past maxProgress × this end the call: the server is flooding. */
const FLOOD_FACTOR = 10;

export interface McpClientsOptions {
  database: Db;
  rule: OutboundRule;
  /** The operator's servers (policy `mcp.servers`), read when asked. */
  adminServers: () => McpServerConfig[];
  log: Logger;
  limits?: Partial<McpLimits>;
}

export interface McpCallResult {
  text: string;
  isError: boolean;
  truncated: boolean;
  /** Progress notifications the server sent (beyond maxProgress they were not passed on). */
  progress: number;
}

export interface McpCallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

interface Connection {
  client: Client;
  transport: Transport;
  fingerprint: string;
  lastUsed: number;
  timer?: ReturnType<typeof setTimeout>;
}

export class McpClients {
  readonly limits: McpLimits;
  private readonly servers: McpServerStore;
  private readonly connections = new Map<string, Promise<Connection>>();
  private sandbox: SandboxProvider | undefined;
  private closed = false;

  constructor(private readonly options: McpClientsOptions) {
    this.limits = { ...DEFAULT_MCP_LIMITS, ...options.limits };
    this.servers = new McpServerStore(options.database);
  }

  /** The sandbox provider stdio servers run in (the chat family owns it and hands it over). */
  useSandbox(sandbox: SandboxProvider): void {
    this.sandbox = sandbox;
  }

  /** Every server the owner may use: the operator's first, then their own. */
  async configs(owner: string): Promise<McpServerConfig[]> {
    return [...this.options.adminServers(), ...(await this.servers.all(owner))];
  }

  async list(owner: string): Promise<McpServerInfo[]> {
    return (await this.configs(owner)).map(publicInfo);
  }

  async put(owner: string, body: McpServerBody): Promise<McpServerInfo> {
    const admin = new Set(this.options.adminServers().map((s) => s.name));
    const config = userServer(body, admin);
    await this.servers.put(owner, config);
    void this.drop(key(owner, config.name));
    return publicInfo(config);
  }

  /**
   * Changes approval or enabled of one of the owner's servers, keeping its stored secrets (a Settings
   * toggle never has them to send again). The operator's servers are read-only: 409.
   */
  async update(owner: string, name: string, change: McpServerUpdate): Promise<McpServerInfo> {
    if (this.options.adminServers().some((s) => s.name === name))
      throw new AppError(
        "conflict",
        `The MCP server '${name}' is configured by the operator for everyone and cannot be changed here`,
      );
    const found = await this.servers.one(owner, name);
    if (!found) throw AppError.notFound(`No MCP server named '${name}'`);
    const config = { ...found, ...change };
    await this.servers.put(owner, config);
    void this.drop(key(owner, name));
    return publicInfo(config);
  }

  async remove(owner: string, name: string): Promise<boolean> {
    void this.drop(key(owner, name));
    return this.servers.remove(owner, name);
  }

  async config(owner: string, name: string): Promise<McpServerConfig> {
    const found = (await this.configs(owner)).find((s) => s.name === name);
    if (!found) throw AppError.notFound(`No MCP server named '${name}'`);
    return found;
  }

  /** The server's tools (connecting first), their schemas capped. */
  async tools(owner: string, name: string): Promise<McpToolInfo[]> {
    const connection = await this.connection(owner, await this.config(owner, name));
    const listed = await connection.client
      .listTools(undefined, { timeout: this.limits.callTimeoutMs })
      .catch((error) => {
        throw unavailable(name, error);
      });
    return listed.tools.slice(0, this.limits.maxTools).map((tool) => {
      const schema = JSON.stringify(tool.inputSchema ?? {});
      return {
        name: tool.name.slice(0, 128),
        ...(tool.description ? { description: tool.description.slice(0, 1024) } : {}),
        inputSchema:
          schema.length <= this.limits.maxSchemaChars
            ? (tool.inputSchema as Record<string, unknown>)
            : { type: "object" },
      };
    });
  }

  /** Calls one tool; the result as text for a model, bounded. */
  async call(
    owner: string,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<McpCallResult> {
    const connection = await this.connection(owner, await this.config(owner, server));
    let progress = 0;
    const { limits } = this;
    // Ends the call early: the caller's abort, or a server flooding progress far past what is passed on.
    const stop = new AbortController();
    const onAbort = () => stop.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const result = await connection.client
      .callTool({ name: tool, arguments: args }, undefined, {
        timeout: limits.callTimeoutMs,
        maxTotalTimeout: limits.callTimeoutMs,
        resetTimeoutOnProgress: false,
        signal: stop.signal,
        onprogress: (p) => {
          progress += 1;
          if (progress <= limits.maxProgress) options.onProgress?.(p);
          else if (progress > limits.maxProgress * FLOOD_FACTOR)
            stop.abort(
              new Error(`it sent more than ${limits.maxProgress * FLOOD_FACTOR} progress notifications`),
            );
        },
      })
      .catch(async (error) => {
        // A server that did not answer in time (or flooded) may still be working or flooding: it is
        // closed (a stdio server's process ends) and the next call connects afresh.
        await this.drop(key(owner, server));
        throw unavailable(
          server,
          stop.signal.aborted && stop.signal.reason instanceof Error ? stop.signal.reason : error,
        );
      })
      .finally(() => {
        options.signal?.removeEventListener("abort", onAbort);
        this.touch(connection);
      });
    const text = resultText(result as { content?: unknown[]; structuredContent?: unknown });
    const truncated = text.length > limits.maxResultChars;
    return {
      text: truncated ? `${text.slice(0, limits.maxResultChars)}\n[truncated]` : text,
      isError: result.isError === true,
      truncated,
      progress,
    };
  }

  /** Closes every connection (server shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.keys()].map((k) => this.drop(k)));
  }

  private async connection(owner: string, config: McpServerConfig): Promise<Connection> {
    if (this.closed) throw new AppError("unavailable", "The server is shutting down");
    if (!config.enabled) throw new AppError("conflict", `The MCP server '${config.name}' is disabled`);
    const k = key(owner, config.name);
    const fingerprint = JSON.stringify(config);
    const pending = this.connections.get(k);
    if (pending) {
      const found = await pending.catch(() => undefined);
      if (found && found.fingerprint === fingerprint) return this.touch(found);
      await this.drop(k);
    }
    const opening = this.open(owner, config, fingerprint);
    this.connections.set(k, opening);
    opening.catch(() => {
      if (this.connections.get(k) === opening) this.connections.delete(k);
    });
    const connection = await opening;
    // The client's own hook: the transport's is the SDK's (it fails the calls in flight).
    connection.client.onclose = () => {
      clearTimeout(connection.timer);
      if (this.connections.get(k) === opening) this.connections.delete(k);
    };
    return this.touch(connection);
  }

  private async open(owner: string, config: McpServerConfig, fingerprint: string): Promise<Connection> {
    const sdk = await import("./sdk.ts");
    const transport = this.transport(sdk, owner, config);
    const client = new sdk.Client({ name: "atrium", version: "1" }, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: this.limits.connectTimeoutMs });
    } catch (error) {
      await transport.close().catch(() => {});
      const ended = transport instanceof sdk.SandboxStdioTransport ? transport.ended : undefined;
      throw unavailable(config.name, ended ?? error);
    }
    return { client, transport, fingerprint, lastUsed: Date.now() };
  }

  private transport(sdk: typeof import("./sdk.ts"), owner: string, config: McpServerConfig): Transport {
    if (config.transport === "http") {
      const fetch = outboundFetchLike({
        rule: this.options.rule,
        namedBy: config.scope === "admin" ? "operator" : "user",
        maxBytes: this.limits.maxMessageBytes,
      });
      return new sdk.StreamableHTTPClientTransport(new URL(config.url as string), {
        fetch,
        requestInit: { headers: config.headers },
      });
    }
    const sandbox = this.sandbox;
    const availability = sandbox?.availability(owner);
    if (!sandbox || !availability?.available)
      throw new AppError(
        "unavailable",
        `The stdio MCP server '${config.name}' runs in your sandbox, which is not available here${availability && !availability.available ? `: ${availability.reason}` : ""}`,
      );
    const open = sandbox.open?.bind(sandbox);
    if (!open)
      throw new AppError(
        "unavailable",
        `The sandbox provider '${sandbox.name}' cannot run stdio MCP servers; add the server by URL`,
      );
    const command = config.command as string;
    return new sdk.SandboxStdioTransport(
      (onData) => open(owner, sdk.shellLine(command, config.args), onData),
      command,
      this.limits.maxMessageBytes,
    );
  }

  private touch(connection: Connection): Connection {
    connection.lastUsed = Date.now();
    clearTimeout(connection.timer);
    connection.timer = setTimeout(() => void connection.transport.close(), this.limits.idleMs);
    connection.timer.unref?.();
    return connection;
  }

  private async drop(k: string): Promise<void> {
    const pending = this.connections.get(k);
    if (!pending) return;
    this.connections.delete(k);
    const connection = await pending.catch(() => undefined);
    if (!connection) return;
    clearTimeout(connection.timer);
    await connection.client.close().catch(() => {});
  }
}

function key(owner: string, name: string): string {
  return `${owner}\0${name}`;
}

/** A server that could not be reached or answered badly: 502 with the reason, never a stack. */
function unavailable(name: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AppError("unavailable", `MCP server '${name}': ${message.slice(0, 500)}`, { status: 502 });
}

/** A tool result as text: text parts as they are, other parts named, structured content as JSON. */
export function resultText(result: { content?: unknown[]; structuredContent?: unknown }): string {
  const parts: string[] = [];
  for (const part of result.content ?? []) {
    const p = part as { type?: string; text?: string; mimeType?: string; uri?: string; resource?: unknown };
    if (p.type === "text" && typeof p.text === "string") parts.push(p.text);
    else if (p.type === "image" || p.type === "audio") parts.push(`[${p.type} ${p.mimeType ?? ""}]`);
    else if (p.type === "resource_link") parts.push(`[resource ${p.uri ?? ""}]`);
    else if (p.type === "resource") {
      const r = p.resource as { uri?: string; text?: string };
      parts.push(typeof r?.text === "string" ? r.text : `[resource ${r?.uri ?? ""}]`);
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join("\n");
}
