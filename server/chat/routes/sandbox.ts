/**
 * `/api/sandbox/*`: the caller's sandbox. `GET /api/sandbox/preview?port=` answers a short-lived signed
 * URL into the caller's active sandbox; the URL itself (`/api/sandbox/preview/<token>/...`) is checked
 * (signature, expiry, owner) before anything is forwarded. Errors are `{error}` with the chat spec's
 * texts; the checks run in the spec's order: 401, 503, 400, 404.
 */
import { Elysia } from "elysia";
import { Preview, PreviewQuery, SandboxError } from "../../../schemas/sandbox.ts";
import type { AppContext } from "../../context.ts";
import { PreviewSigner } from "../../sandbox/users/preview.ts";
import type { SandboxProvider } from "../../sandbox/users/provider.ts";

const tags = ["chat"];
type Peer = { requestIP(request: Request): { address: string } | null } | null;

const error = (status: number, text: string) =>
  new Response(JSON.stringify({ error: text }), { status, headers: { "content-type": "application/json" } });

/** The port of `?port=`: an integer 1..65535, 3000 when absent; undefined when invalid. */
export function previewPort(raw: string | undefined): number | undefined {
  const port = Number(raw ?? "3000");
  return Number.isInteger(port) && port >= 1 && port <= 65535 && (raw === undefined || raw.trim() !== "")
    ? port
    : undefined;
}

export function sandboxRoutes(ctx: AppContext, sandboxes: SandboxProvider) {
  const signer = new PreviewSigner(ctx.config.auth.secret);
  const forward = async ({
    params,
    owner,
    request,
  }: {
    params: Record<string, string>;
    owner: string;
    request: Request;
  }) => {
    const claim = signer.verify(params.token ?? "");
    if (!claim || claim.owner !== owner) return error(403, "Invalid or expired preview URL");
    const target = sandboxes.previewTarget(owner, claim.port);
    if (!target) return error(502, `Nothing answers on port ${claim.port} in your sandbox`);
    const url = new URL(request.url);
    const rest = url.pathname.split("/").slice(5).join("/");
    const upstream = await fetch(`http://${target.host}:${target.port}/${rest}${url.search}`, {
      method: request.method,
      headers: { accept: request.headers.get("accept") ?? "*/*" },
      redirect: "manual",
    }).catch(() => undefined);
    return upstream ?? error(502, `Nothing answers on port ${claim.port} in your sandbox`);
  };
  return new Elysia({ name: "atrium/chat/sandbox" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get(
      "/api/sandbox/preview",
      ({ owner, query, request, server }) => {
        if (!sandboxes.availability().available) return error(503, "Sandbox not available");
        const port = previewPort(query.port);
        if (port === undefined) return error(400, "Invalid port");
        if (!sandboxes.registry.of(owner)) sandboxes.ensure(owner);
        if (!sandboxes.active(owner)) return error(404, "No active sandbox for user");
        const { token, expiresAt } = signer.sign(owner, port);
        const peer = (server as Peer)?.requestIP(request)?.address;
        const scheme = ctx.proxies.clientOf(request, peer).https ? "https" : "http";
        const host = request.headers.get("host") ?? new URL(request.url).host;
        return {
          url: `${scheme}://${host}/api/sandbox/preview/${token}/`,
          port,
          expiresAt: new Date(expiresAt).toISOString(),
        };
      },
      {
        query: PreviewQuery,
        response: {
          200: Preview,
          400: SandboxError,
          401: SandboxError,
          404: SandboxError,
          503: SandboxError,
        },
        detail: {
          summary: "A short-lived signed preview URL to a port in your sandbox (default 3000)",
          tags,
        },
      },
    )
    .get("/api/sandbox/preview/:token/*", forward, {
      detail: {
        summary: "Follow a signed preview URL (checked: signature, expiry, owner)",
        tags,
        hide: true,
      },
    })
    .get("/api/sandbox/preview/:token", forward, {
      detail: { summary: "Follow a signed preview URL", tags, hide: true },
    });
}
