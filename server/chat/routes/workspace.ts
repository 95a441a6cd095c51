/**
 * `/api/workspace/*`: the caller's agent workspace (health, tree, file, items, item, search) and the
 * projection rebuild (`reindex`, CSRF-protected and rate limited on protected deployments).
 */
import { Elysia } from "elysia";
import { ChatError } from "../../../schemas/common.ts";
import {
  CsrfToken,
  FileQuery,
  ItemQuery,
  Reindexed,
  SearchQuery,
  WorkspaceFile,
  WorkspaceHealth,
  WorkspaceItem,
  WorkspaceItems,
  WorkspaceSearch,
  WorkspaceTree,
} from "../../../schemas/workspace.ts";
import type { AppContext } from "../../context.ts";
import type { ProtectedWriteGuard } from "../workspace/csrf.ts";
import type { WorkspaceService } from "../workspace/service.ts";
import { issueCsrfToken } from "./csrf-token.ts";

const tags = ["chat"];

export function workspaceRoutes(
  ctx: AppContext,
  services: { workspace: WorkspaceService; writeGuard: ProtectedWriteGuard },
) {
  const { workspace, writeGuard: guard } = services;
  const errors = { 400: ChatError, 403: ChatError, 404: ChatError, 503: ChatError };
  return new Elysia({ name: "atrium/chat/workspace" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get("/api/workspace/health", ({ owner }) => workspace.health(owner), {
      response: { 200: WorkspaceHealth, 503: ChatError },
      detail: {
        summary: "Workspace contract health: manifest version, missing canonical paths, projection",
        tags,
      },
    })
    .get("/api/workspace/tree", ({ owner }) => workspace.tree(owner), {
      response: { 200: WorkspaceTree, 503: ChatError },
      detail: { summary: "Browse the agent workspace (canonical paths; symlinks are not followed)", tags },
    })
    .get("/api/workspace/file", ({ owner, query }) => workspace.file(owner, query.path), {
      query: FileQuery,
      response: { 200: WorkspaceFile, ...errors },
      detail: { summary: "Read a canonical workspace file (agent-workspace/...; 256 KiB at most)", tags },
    })
    .get("/api/workspace/items", ({ owner }) => workspace.items(owner), {
      response: { 200: WorkspaceItems, 503: ChatError },
      detail: { summary: "List the items of the workspace projection", tags },
    })
    .get("/api/workspace/item", ({ owner, query }) => workspace.item(owner, query.id), {
      query: ItemQuery,
      response: { 200: WorkspaceItem, ...errors },
      detail: { summary: "One workspace item with its indexed content", tags },
    })
    .get("/api/workspace/search", ({ owner, query }) => workspace.search(owner, query.q), {
      query: SearchQuery,
      response: { 200: WorkspaceSearch, ...errors },
      detail: {
        summary: "Search the workspace through its FTS5 projection (agent-workspace/indexes/)",
        tags,
      },
    })
    .get(
      "/api/workspace/reindex",
      ({ identity, request, server, set }) => ({
        csrfToken: issueCsrfToken(ctx, guard, { identity, request, server, set }),
      }),
      {
        response: { 200: CsrfToken },
        detail: {
          summary: "A CSRF token for POST /api/workspace/reindex (also set as the app_csrf cookie)",
          tags,
        },
      },
    )
    .post(
      "/api/workspace/reindex",
      async ({ identity, owner, request }) => {
        guard.checkCsrf(request, identity);
        await guard.count(owner);
        return workspace.reindex(owner);
      },
      {
        response: { 200: Reindexed, 403: ChatError, 429: ChatError, 503: ChatError },
        detail: {
          summary:
            "Rebuild the workspace projection; canonical files are not modified (protected: x-app-csrf-token, 5 per minute)",
          tags,
        },
      },
    );
}
