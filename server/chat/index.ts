/**
 * The chat family (docs/chat.md): streaming chat on the pi agent runtime. Each instance builds its
 * stores, then its runtime (the pi host: a pool of live pi sessions; the users' sandboxes), then its
 * services, then its thin routes (each `(ctx, services)`), all stopped with the instance.
 *
 *   routes/      the Elysia plugins: validated input, one service call, the answer
 *   services/    chat, sessions, attach, provenance, catalogs, settings (no Elysia context)
 *   stores/      the mirror on the database port: sessions, runs, provider keys
 *   runtime/     the pi host: live sessions, tools and their guards, plan mode, owner folders
 *   workspace/   the agent workspace's contract, projection and the protected-write guard
 *   migrations/  the mirror's tables
 */

import { Elysia } from "elysia";
import { limitsFromPolicy } from "../config/sandbox-limits.ts";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { messageEnvelope } from "../http/errors.ts";
import { outboundRule } from "../http/outbound/rule.ts";
import { QuotaWatch } from "../sandbox/quota-watch.ts";
import { sandboxProviderFor } from "../sandbox/users/provider.ts";
import { chatMigrations } from "./migrations/index.ts";
import { catalogRoutes } from "./routes/catalogs.ts";
import { mcpServerRoutes } from "./routes/mcp-servers.ts";
import { chatRunRoutes } from "./routes/runs.ts";
import { sandboxRoutes } from "./routes/sandbox.ts";
import { sandboxSettingsRoutes } from "./routes/sandbox-settings.ts";
import { chatSessionRoutes } from "./routes/sessions.ts";
import { chatStreamRoutes } from "./routes/streams.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { workspaceRoutes } from "./routes/workspace.ts";
import { ChatRuntimeHost } from "./runtime/host.ts";
import { shellOptions } from "./runtime/shell.ts";
import { ChatAttachService } from "./services/attach.ts";
import { ChatCatalogService } from "./services/catalogs.ts";
import { ChatService } from "./services/chat.ts";
import { ChatProvenanceService } from "./services/provenance.ts";
import { SandboxKeyService } from "./services/sandbox-keys.ts";
import { ChatSessionService } from "./services/sessions.ts";
import { ChatSettingsService } from "./services/settings.ts";
import { ChatStore } from "./stores/index.ts";
import { ProtectedWriteGuard } from "./workspace/csrf.ts";
import { WorkspaceService } from "./workspace/service.ts";

export const chatFamily = defineFamily({
  name: "chat",
  tag: {
    name: "chat",
    description:
      "Streaming chat backend for the pi agent runtime: NDJSON turns, sessions, models, providers, commands, resources, settings, workspace and sandbox (docs/chat.md).",
  },
  migrations: chatMigrations,
  paths: {
    prefixes: [
      "/api/chat",
      "/api/workspace",
      "/api/sandbox",
      "/api/webhooks",
      "/api/auth",
      "/api/health",
      "/api/post-chat",
      "/api/attach",
    ],
  },
  envelope: messageEnvelope,
  create(ctx) {
    const stores = chatStores(ctx);
    const runtime = chatRuntime(ctx, stores);
    const services = chatServices(ctx, stores, runtime);
    return {
      routes: chatRoutes(ctx, services),
      /** The users' own sandbox keys into memory, before the first request asks for one. */
      start: () => stores.providerKeys.loadSandboxKeys(),
      /** The pi host and the users' sandboxes (tests drive them directly). */
      runtime,
      services,
      /** Closes the live pi sessions, then stops every user's sandbox. */
      stop: async () => {
        await runtime.host.stop();
        await runtime.sandboxes.close();
        runtime.quota.close();
      },
    };
  },
});

/** The SQL mirror on the database port (ctx.database): sessions, runs, provider keys. */
function chatStores(ctx: AppContext) {
  return new ChatStore(ctx.database);
}

/** What runs below the services: the quota watch, the users' sandboxes, the pi host. */
function chatRuntime(ctx: AppContext, stores: ChatStore) {
  const { dataDir } = ctx.config;
  const { sandbox, storage } = ctx.config.policy.settings;
  // What sandboxes write to a workspace counts against the owner's quota, like the Files API's writes.
  const quota = new QuotaWatch({
    dataDir,
    limitBytes: storage.workspace_quota_bytes,
    maxEntries: storage.workspace_max_files,
  });
  const sandboxes = sandboxProviderFor(
    ctx.env,
    ctx.database,
    {
      dataDir,
      limits: limitsFromPolicy(sandbox),
      network: sandbox.network,
      maxSandboxes: sandbox.max_user_sandboxes,
      uidBase: sandbox.uid_base,
      quota,
    },
    (owner) => stores.providerKeys.sandboxKey(owner),
  );
  // Stdio MCP servers run in the user's own sandbox: the shared MCP client uses this provider.
  ctx.mcp.useSandbox(sandboxes);
  // The owner's own machine: shell commands on the host, and settings that name extensions and
  // packages in the owner's pi agent dir. Protected mode has neither.
  const local = ctx.config.mode.kind === "local";
  const host = new ChatRuntimeHost({
    dataDir,
    models: ctx.models,
    env: ctx.env,
    log: ctx.log,
    sessions: stores.sessions,
    runs: stores.runs,
    providerKeys: stores.providerKeys,
    // Shell commands: on the owner's own machine (local mode, each command in a fresh jail: shell.ts),
    // or (protected mode) in the user's long-lived sandbox when the jail works, where the file tools
    // run too; without it protected mode refuses them.
    hostCommands: local,
    settingsCode: local,
    shell: shellOptions(sandbox, quota),
    mcp: ctx.mcp,
    ...(!local && sandboxes.availability().available ? { sandbox: sandboxes } : {}),
  });
  return { quota, sandboxes, host };
}

/** The services, each given only what it uses. */
function chatServices(ctx: AppContext, stores: ChatStore, runtime: ReturnType<typeof chatRuntime>) {
  const { dataDir } = ctx.config;
  const { host, sandboxes } = runtime;
  const local = ctx.config.mode.kind === "local";
  // Local mode always mirrors; protected mode mirrors when a chat database is configured (docs/design.md §5).
  const mirrorEnabled = local || ctx.env.has("APP_CHAT_DATABASE_URL");
  const settings = new ChatSettingsService({ host, models: ctx.models, dataDir, allowCode: local });
  return {
    chat: new ChatService({
      host,
      sessions: stores.sessions,
      runs: stores.runs,
      models: ctx.models,
      dataDir,
      log: ctx.log,
    }),
    sessions: new ChatSessionService({ host, mirror: stores, dataDir, mirrorEnabled }),
    attach: new ChatAttachService({ host, sessions: stores.sessions, dataDir }),
    provenance: new ChatProvenanceService(stores.runs),
    catalogs: new ChatCatalogService({
      host,
      providerKeys: stores.providerKeys,
      models: ctx.models,
      env: ctx.env,
      dataDir,
      settings,
      outbound: outboundRule({
        local,
        allow: ctx.config.outboundAllow,
        operatorUrls: [ctx.env.get("OLLAMA_BASE_URL")],
      }),
    }),
    settings,
    workspace: new WorkspaceService(dataDir),
    // One guard for the protected writes (workspace reindex, sandbox settings): they share the CSRF cookie.
    writeGuard: new ProtectedWriteGuard({
      protectedMode: ctx.config.mode.kind === "protected",
      secret: ctx.config.auth.secret,
      publicOrigins: ctx.config.publicOrigins,
      limits: ctx.limits,
    }),
    sandboxes,
    sandboxKeys: new SandboxKeyService(stores.providerKeys),
    /** The MCP servers a user adds as tools (the shared client: server/mcp-client/). */
    mcp: ctx.mcp,
  };
}

/** The thin routes, each given the app's context and the services. */
function chatRoutes(ctx: AppContext, services: ReturnType<typeof chatServices>) {
  return new Elysia({ name: "atrium/chat" })
    .use(chatStreamRoutes(ctx, services))
    .use(chatSessionRoutes(ctx, services))
    .use(chatRunRoutes(ctx, services))
    .use(catalogRoutes(ctx, services))
    .use(webhookRoutes(ctx, services))
    .use(workspaceRoutes(ctx, services))
    .use(sandboxRoutes(ctx, services))
    .use(sandboxSettingsRoutes(ctx, services))
    .use(mcpServerRoutes(ctx, services));
}
