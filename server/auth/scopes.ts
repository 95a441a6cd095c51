/**
 * Which scope a request needs, for personal access tokens (docs/auth.md#personal-access-tokens).
 *
 * A scope is a family's name (`chat`, `turns`, `search`, `agents`) or `mcp`. The family that owns a
 * path (the prefixes each family declares, server/family.ts) decides the scope, so a route added to a
 * family later is covered without a list to keep. `<family>:read` allows GET and HEAD only, and not a
 * WebSocket upgrade (an open `/v1/chat` socket sends messages that write). `/mcp` needs `mcp`, which
 * has no read variant: every MCP call is a POST, and what each tool then does is checked again on the
 * family route it calls. A path no family owns needs no scope (the public pages, or a 404).
 */
import { AppError } from "../http/errors.ts";
import { type FamilyPaths, pathOwners } from "../http/families.ts";

export const FAMILY_SCOPES = ["chat", "turns", "search", "agents"] as const;
/** Every scope a token may carry, in the order lists show them. */
export const SCOPES = [
  ...FAMILY_SCOPES.flatMap((family) => [family, `${family}:read`] as const),
  "mcp",
] as const;
export type Scope = (typeof SCOPES)[number];

/** The path of Atrium's own MCP server (server/mcp/). */
export const MCP_PATH = "/mcp";

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Whether scopes `granted` cover `needed` (`turns` covers `turns:read`). */
export function covers(granted: readonly string[], needed: string): boolean {
  if (granted.includes(needed)) return true;
  return needed.endsWith(":read") && granted.includes(needed.slice(0, -":read".length));
}

/**
 * The scope table of one app: empty until the app tells it which family owns which paths (createApp
 * does, before serving), the way the upload routes learn theirs.
 */
export class ScopeRules {
  private familyOf: (path: string) => string | undefined = () => undefined;

  learn(families: readonly { name: string; paths: FamilyPaths }[]): void {
    this.familyOf = pathOwners(families.map((f) => ({ paths: f.paths, value: f.name })));
  }

  /** The scope a request needs, or undefined when none does. */
  needed(request: Request, path: string): Scope | undefined {
    if (path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)) return "mcp";
    const family = this.familyOf(path);
    if (!family || !(FAMILY_SCOPES as readonly string[]).includes(family)) return undefined;
    const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const reads = (request.method === "GET" || request.method === "HEAD") && !upgrade;
    return (reads ? `${family}:read` : family) as Scope;
  }
}

/** The 403 for a token whose scopes do not cover a route, naming the scope it needs. */
export function missingScope(granted: readonly string[], needed: Scope): AppError | undefined {
  if (covers(granted, needed)) return undefined;
  return new AppError(
    "forbidden",
    `This access token does not have the scope '${needed}' this route needs (it has: ${granted.join(", ")})`,
    { code: "insufficient_scope" },
  );
}
