/**
 * The chat family (docs/chat.md): streaming chat on the pi agent runtime. Each instance has its
 * own stores, runtime host (a pool of live pi sessions) and services, stopped with the instance.
 *
 *   routes/      the Elysia plugins: validated input, one service call, the answer
 *   services/    turns, sessions, attach, provenance, catalogs, settings (no Elysia context)
 *   stores/      the SQLite mirror: sessions, runs, provider keys
 *   runtime/     the pi host: live sessions, tools and their guards, plan mode, owner folders
 *   migrations/  the mirror's tables
 */

import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { messageEnvelope } from "../http/errors.ts";
import { outboundRule } from "../http/outbound/rule.ts";
import { limitsFromPolicy } from "../sandbox/limits.ts";
import { QuotaWatch } from "../sandbox/quota-watch.ts";
import { type SandboxProvider, sandboxProviderFor } from "../sandbox/users/provider.ts";
import { chatMigrations } from "./migrations/index.ts";
import { catalogRoutes } from "./routes/catalogs.ts";
import { deploymentRoutes } from "./routes/deployment.ts";
import { mcpServerRoutes } from "./routes/mcp-servers.ts";
import { runRoutes } from "./routes/runs.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { turnRoutes } from "./routes/turns.ts";
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
    const { sandbox, storage } = ctx.config.policy.settings;
    const sandboxKeys = new SandboxKeyService(ctx.store);
    // What sandboxes write to a workspace counts against the owner's quota, like the Files API's writes.
    const quota = new QuotaWatch({
      dataDir: ctx.config.dataDir,
      limitBytes: storage.workspace_quota_bytes,
      maxEntries: storage.workspace_max_files,
    });
    const sandboxes = sandboxProviderFor(
      ctx.env,
      ctx.store,
      {
        dataDir: ctx.config.dataDir,
        limits: limitsFromPolicy(sandbox),
        network: sandbox.network,
        maxSandboxes: sandbox.max_user_sandboxes,
        uidBase: sandbox.uid_base,
        quota,
      },
      sandboxKeys.keyFor,
    );
    // Stdio MCP servers run in the user's own sandbox: the shared MCP client uses this provider.
    ctx.mcp.useSandbox(sandboxes);
    const services = chatServices(ctx, sandboxes, quota);
    return {
      /** The services behind the routes (tests reach the runtime host through them). */
      services,
      routes: new Elysia({ name: "atrium/chat" })
        .use(turnRoutes(ctx, services.chat, services.attach))
        .use(sessionRoutes(ctx, services.sessions))
        .use(runRoutes(ctx, services.provenance))
        .use(catalogRoutes(ctx, services.catalogs, services.settings))
        .use(deploymentRoutes(ctx, sandboxes, sandboxKeys))
        .use(mcpServerRoutes(ctx)),
      /** The users' sandboxes (tests drive them directly). */
      sandboxes,
      /** Closes the live pi sessions, then stops every user's sandbox. */
      stop: async () => {
        await services.host.stop();
        await sandboxes.close();
        quota.close();
      },
    };
  },
});

/** Wires one instance: stores over the app's database → the runtime host → the services. */
function chatServices(ctx: AppContext, sandboxes: SandboxProvider, quota: QuotaWatch) {
  const store = new ChatStore(ctx.store);
  const { dataDir } = ctx.config;
  // The owner's own machine: shell commands on the host, and settings that name extensions and
  // packages in the owner's pi agent dir. Protected mode has neither.
  const local = ctx.config.mode.kind === "local";
  const host = new ChatRuntimeHost({
    dataDir,
    models: ctx.models,
    env: ctx.env,
    log: ctx.log,
    sessions: store.sessions,
    runs: store.runs,
    providerKeys: store.providerKeys,
    // Shell commands: on the owner's own machine (local mode, each command in a fresh jail: shell.ts),
    // or (protected mode) in the user's long-lived sandbox when the jail works, where the file tools
    // run too; without it protected mode refuses them.
    hostCommands: local,
    settingsCode: local,
    shell: shellOptions(ctx.config.policy.settings.sandbox, quota),
    mcp: ctx.mcp,
    ...(!local && sandboxes.availability().available ? { sandbox: sandboxes } : {}),
  });
  // Local mode always mirrors; protected mode mirrors when a chat database is configured (docs/design.md §5).
  const mirrorEnabled = local || ctx.env.has("APP_CHAT_DATABASE_URL");
  const settings = new ChatSettingsService({ host, models: ctx.models, dataDir, allowCode: local });
  return {
    host,
    chat: new ChatService({
      host,
      sessions: store.sessions,
      runs: store.runs,
      models: ctx.models,
      dataDir,
      log: ctx.log,
    }),
    sessions: new ChatSessionService({ host, mirror: store, dataDir, mirrorEnabled }),
    attach: new ChatAttachService({ host, sessions: store.sessions, dataDir }),
    provenance: new ChatProvenanceService(store.runs),
    catalogs: new ChatCatalogService({
      host,
      providerKeys: store.providerKeys,
      models: ctx.models,
      env: ctx.env,
      dataDir,
      settings,
      outbound: outboundRule({
        local: ctx.config.mode.kind === "local",
        allow: ctx.config.outboundAllow,
        operatorUrls: [ctx.env.get("OLLAMA_BASE_URL")],
      }),
    }),
    settings,
  };
}
