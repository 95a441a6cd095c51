/**
 * What an MCP server configuration is, where it comes from and how a user's one is checked: a user's
 * own (the API, stored by store.ts) or the operator's for everyone (the policy's `mcp.servers`, secrets
 * named by environment variable). A user's server cannot take an operator's name. Bad input is a 4xx in
 * the calling family's envelope (AppError), and changes nothing.
 */
import type { McpServerBody, McpServerInfo } from "../../schemas/mcp-servers.ts";
import type { EnvSource } from "../config/env.ts";
import type { PolicySettings } from "../config/policy-schema.ts";
import { AppError, invalidValue } from "../http/errors.ts";

export type Approval = "ask" | "allow";

export interface McpServerConfig {
  name: string;
  scope: "user" | "admin";
  transport: "http" | "stdio";
  url?: string;
  /** Secret: sent to the HTTP server only. A token is stored as `Authorization: Bearer …`. */
  headers: Record<string, string>;
  command?: string;
  args: string[];
  approval: Approval;
  enabled: boolean;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Headers the transport sets itself: a user's value would break the protocol or the request. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
]);
const MAX_HEADERS = 32;

/** A user's body checked and turned into a configuration; `adminNames` are taken. */
export function userServer(body: McpServerBody, adminNames: ReadonlySet<string>): McpServerConfig {
  if (adminNames.has(body.name))
    throw new AppError(
      "conflict",
      `The MCP server '${body.name}' is configured by the operator for everyone`,
    );
  const approval = body.approval ?? "ask";
  const enabled = body.enabled ?? true;
  if (body.transport === "stdio") {
    if (!body.command) throw invalidValue(["body", "command"], "a stdio server needs a command");
    for (const key of ["url", "headers", "token"] as const)
      if (body[key] !== undefined) throw invalidValue(["body", key], "only an http server takes this");
    if (/[\0\n\r]/.test(body.command) || (body.args ?? []).some((a) => a.includes("\0")))
      throw invalidValue(["body", "command"], "no NUL or line breaks");
    return {
      name: body.name,
      scope: "user",
      transport: "stdio",
      command: body.command,
      args: body.args ?? [],
      headers: {},
      approval,
      enabled,
    };
  }
  if (body.command !== undefined || body.args !== undefined)
    throw invalidValue(["body", "command"], "only a stdio server takes a command and args");
  if (!body.url) throw invalidValue(["body", "url"], "an http server needs a url");
  let url: URL;
  try {
    url = new URL(body.url);
  } catch {
    throw invalidValue(["body", "url"], "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalidValue(["body", "url"], "only http and https URLs");
  if (url.username || url.password)
    throw invalidValue(["body", "url"], "no credentials in the URL (use token or headers)");
  const headers: Record<string, string> = {};
  const entries = Object.entries(body.headers ?? {});
  if (entries.length > MAX_HEADERS) throw invalidValue(["body", "headers"], `at most ${MAX_HEADERS} headers`);
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw invalidValue(["body", "headers", name], "not a header name");
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      throw invalidValue(["body", "headers", name], "set by the MCP transport itself");
    if (/[\0\r\n]/.test(value)) throw invalidValue(["body", "headers", name], "no NUL or line breaks");
    headers[name] = value;
  }
  if (body.token !== undefined) {
    if (!body.token || /[\0\r\n\s]/.test(body.token)) throw invalidValue(["body", "token"], "not a token");
    if (Object.keys(headers).some((h) => h.toLowerCase() === "authorization"))
      throw invalidValue(["body", "token"], "give a token or an Authorization header, not both");
    headers.Authorization = `Bearer ${body.token}`;
  }
  return {
    name: body.name,
    scope: "user",
    transport: "http",
    url: url.href,
    headers,
    args: [],
    approval,
    enabled,
  };
}

/** The operator's servers of the policy, their secrets read from the environment now. */
export function adminServers(settings: PolicySettings, env: EnvSource): McpServerConfig[] {
  return (settings.mcp?.servers ?? []).map((s) => {
    const headers: Record<string, string> = {};
    for (const [name, variable] of Object.entries(s.headers_env ?? {})) {
      const value = env.get(variable);
      if (value) headers[name] = value;
    }
    const token = s.token_env ? env.get(s.token_env) : undefined;
    if (token) headers.Authorization = `Bearer ${token}`;
    return {
      name: s.name,
      scope: "admin",
      transport: s.command ? "stdio" : "http",
      ...(s.url ? { url: s.url } : {}),
      ...(s.command ? { command: s.command } : {}),
      args: s.args ?? [],
      headers,
      approval: s.approval ?? "ask",
      enabled: true,
    };
  });
}

/** What a response may show of a configuration: never a header's value. */
export function publicInfo(config: McpServerConfig): McpServerInfo {
  const headerNames = Object.keys(config.headers);
  return {
    name: config.name,
    scope: config.scope,
    transport: config.transport,
    ...(config.url ? { url: config.url } : {}),
    ...(config.command ? { command: config.command } : {}),
    args: config.args,
    headerNames,
    hasToken: headerNames.some((h) => h.toLowerCase() === "authorization"),
    approval: config.approval,
    enabled: config.enabled,
  };
}
