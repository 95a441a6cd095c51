/**
 * `/api/sandbox/*`: the caller's sandbox. `GET /api/sandbox/preview?port=` answers a short-lived signed
 * URL into the caller's running sandbox (started when the caller has none yet); the URL itself
 * (`/api/sandbox/preview/<token>/...`, any method, and WebSocket upgrades) is checked (signature, expiry,
 * owner) before anything is forwarded to the port inside the sandbox (preview-proxy.ts says how a
 * previewed page is confined). Errors are `{error}` with the chat contract's texts; the checks of the URL
 * request run in the contract's order: 401, 503, 400, 404.
 */
import { Elysia } from "elysia";
import { Preview, PreviewQuery, SandboxError } from "../../../schemas/sandbox.ts";
import type { AppContext } from "../../context.ts";
import { errorTextEnvelope } from "../../http/errors.ts";
import { routePolicy } from "../../http/route-policy.ts";
import { type PreviewClaim, PreviewSigner } from "../../sandbox/users/preview.ts";
import type { PreviewUpstream, SandboxProvider } from "../../sandbox/users/provider-api.ts";
import type { WsLink } from "../../sandbox/users/ws-client.ts";
import { forwardHttp, forwardWebSocket } from "./preview-proxy.ts";

const tags = ["chat"];
/** The chat API's sandbox routes answer errors as `{error}`, 401 included (docs/chat.md). */
const ERRORS = { envelope: errorTextEnvelope } as const;
/**
 * A signed preview URL: its token is its credential (a previewed page runs in an opaque origin and
 * sends no session cookie, `Origin: null`), and it forwards any body to the user's own sandbox.
 */
const SIGNED_URL = { ...ERRORS, public: true, anyOrigin: true, bodies: "any" } as const;

const error = (status: number, text: string) =>
  new Response(JSON.stringify({ error: text }), { status, headers: { "content-type": "application/json" } });

/** The port of `?port=`: an integer 1..65535, 3000 when absent; undefined when invalid. */
export function previewPort(raw: string | undefined): number | undefined {
  const port = Number(raw ?? "3000");
  return Number.isInteger(port) && port >= 1 && port <= 65535 && (raw === undefined || raw.trim() !== "")
    ? port
    : undefined;
}

/** The path and query after `/api/sandbox/preview/<token>`, always starting with `/`. */
function restOf(request: Request): string {
  const url = new URL(request.url);
  return `/${url.pathname.split("/").slice(5).join("/")}${url.search}`;
}

export function sandboxRoutes(ctx: AppContext, { sandboxes }: { sandboxes: SandboxProvider }) {
  const signer = new PreviewSigner(ctx.config.auth.secret);
  /**
   * The claim and the upstream of a preview URL, or the answer refusing it. The signed token is the
   * credential (a previewed page sends no session cookie: see preview-proxy.ts); a caller who is
   * signed in as someone else is refused all the same.
   */
  const resolve = async (
    token: string | undefined,
    caller: string | undefined,
  ): Promise<{ claim: PreviewClaim; upstream: PreviewUpstream } | Response> => {
    const claim = signer.verify(token ?? "");
    if (!claim || (caller !== undefined && claim.owner !== caller))
      return error(403, "Invalid or expired preview URL");
    const upstream = await sandboxes.preview(claim.owner, claim.port);
    if (!upstream) return error(404, "No active sandbox for user");
    return { claim, upstream };
  };
  const forward = async ({
    params,
    identity,
    request,
  }: {
    params: Record<string, string>;
    identity?: { id: string };
    request: Request;
  }) => {
    const found = await resolve(params.token, identity?.id);
    if (found instanceof Response) return found;
    // A page at `/<token>` would resolve its relative links against the folder above it.
    const url = new URL(request.url);
    if (url.pathname.split("/").length === 5) {
      return new Response(null, { status: 308, headers: { location: `${url.pathname}/${url.search}` } });
    }
    return forwardHttp(request, found.upstream, found.claim.port, restOf(request));
  };
  const links = new WeakMap<object, WsLink>();
  return new Elysia({ name: "atrium/chat/sandbox" })
    .use(ctx.identity)
    .use(routePolicy)
    .ws("/api/sandbox/preview/:token/*", {
      detail: { hide: true },
      routePolicy: SIGNED_URL,
      beforeHandle: async ({ params, identity }) => {
        const found = await resolve((params as Record<string, string>).token, identity?.id);
        if (found instanceof Response) return found;
      },
      open: async (ws) => {
        // The client may send before the URL is checked again (a database read): its first messages wait
        // here, in order, instead of being dropped; a close meanwhile ends it.
        const early: (string | Uint8Array)[] = [];
        let closedEarly = false;
        links.set(ws.raw, { send: (m) => early.push(m), close: () => (closedEarly = true) });
        const data = ws.data as unknown as {
          params: Record<string, string>;
          identity?: { id: string };
          request: Request;
          headers: Record<string, string | undefined>;
        };
        const found = await resolve(data.params.token, data.identity?.id);
        if (closedEarly) return;
        if (found instanceof Response) return ws.close(1008, "Invalid or expired preview URL");
        const request = {
          headers: new Headers(
            Object.entries(data.headers ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"),
          ),
        };
        const path = `/${data.params["*"] ?? ""}`;
        const query = new URL(data.request?.url ?? "http://x/").search;
        const link = forwardWebSocket(found.upstream, found.claim.port, `${path}${query}`, request, {
          send: (message) => ws.send(message),
          close: (code, reason) => ws.close(code, reason),
        });
        links.set(ws.raw, link);
        for (const message of early.splice(0)) link.send(message);
      },
      message: (ws, message) => {
        const link = links.get(ws.raw);
        if (!link) return;
        if (typeof message === "string") link.send(message);
        else if (message instanceof Uint8Array) link.send(message);
        else link.send(JSON.stringify(message));
      },
      close: (ws) => {
        links.get(ws.raw)?.close();
        links.delete(ws.raw);
      },
    })
    .all("/api/sandbox/preview/:token/*", forward, {
      parse: "none",
      routePolicy: SIGNED_URL,
      detail: {
        summary: "Follow a signed preview URL (checked: signature, expiry, owner)",
        tags,
        hide: true,
      },
    })
    .all("/api/sandbox/preview/:token", forward, {
      parse: "none",
      routePolicy: SIGNED_URL,
      detail: { summary: "Follow a signed preview URL", tags, hide: true },
    })
    .guard({ owner: true })
    .get(
      "/api/sandbox/preview",
      async ({ owner, query, request, server }) => {
        if (!sandboxes.availability(owner).available) return error(503, "Sandbox not available");
        const port = previewPort(query.port);
        if (port === undefined) return error(400, "Invalid port");
        // Local mode: the agent's commands run each in a fresh jail on the owner's machine (shell.ts), never
        // in a long-lived sandbox, so there is none to preview and none is started for nothing.
        if (ctx.config.mode.kind === "local") return error(404, "No active sandbox for user");
        // Stopped, archived (webhook, `stop`): not restarted by a preview; anything else is started.
        const state = (await sandboxes.registry.of(owner))?.state;
        if (state !== "stopped" && state !== "archived" && !(await sandboxes.active(owner)))
          await sandboxes.ensure(owner).catch((cause) => ctx.log.warn("sandbox start failed", { cause }));
        if (!(await sandboxes.active(owner))) return error(404, "No active sandbox for user");
        const { token, expiresAt } = signer.sign(owner, port);
        const scheme = ctx.proxies.client(request, server).https ? "https" : "http";
        const host = request.headers.get("host") ?? new URL(request.url).host;
        // Async handlers answer one type: the 200 body as a Response too (the schema still documents it).
        return Response.json({
          url: `${scheme}://${host}/api/sandbox/preview/${token}/`,
          port,
          expiresAt: new Date(expiresAt).toISOString(),
        });
      },
      {
        query: PreviewQuery,
        routePolicy: ERRORS,
        response: {
          200: Preview,
          400: SandboxError,
          401: SandboxError,
          404: SandboxError,
          503: SandboxError,
        },
        detail: {
          summary: "A short-lived signed preview URL to a port in your sandbox (default 3000)",
          description:
            "The URL forwards every method and WebSocket upgrades to 127.0.0.1:<port> inside the caller's running sandbox, for the caller only, until it expires (10 minutes). Previewed pages run sandboxed (CSP `sandbox`, an opaque origin): they cannot use the app's API with the caller's session. 403 for a forged, expired or another user's URL, 404 when the sandbox is not running, 502 when nothing listens on the port.",
          tags,
        },
      },
    );
}
