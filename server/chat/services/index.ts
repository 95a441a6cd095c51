/** Builds the chat family's services over one app context (one runtime host per context). */
import type { AppContext } from "../../context.ts";
import { RuntimeHost } from "../runtime/host.ts";
import { shellOptions } from "../runtime/shell.ts";
import { ChatStore } from "../store.ts";
import { AttachService } from "./attach.ts";
import { CatalogService } from "./catalogs.ts";
import { ChatService } from "./chat.ts";
import { ProvenanceService } from "./provenance.ts";
import { SessionService } from "./sessions.ts";

export interface ChatServices {
  host: RuntimeHost;
  store: ChatStore;
  chat: ChatService;
  sessions: SessionService;
  attach: AttachService;
  provenance: ProvenanceService;
  catalogs: CatalogService;
}

export interface ChatServiceOptions {
  maxIdleSessions?: number;
  idleMs?: number;
}

export function createChatServices(ctx: AppContext, options: ChatServiceOptions = {}): ChatServices {
  const store = new ChatStore(ctx.store);
  const dataDir = ctx.config.dataDir;
  const host = new RuntimeHost({
    dataDir,
    models: ctx.models,
    env: ctx.env,
    store,
    log: ctx.log,
    // Shell commands run on the host only in local mode (the user's own machine).
    hostCommands: ctx.config.mode.kind === "local",
    // ... in the sandbox's jail, with the policy's limits and network (shell.ts).
    shell: shellOptions(ctx.config.policy.settings.sandbox),
    ...options,
  });
  // Local mode always mirrors; protected mode mirrors when a chat database is configured (DESIGN.md 5).
  const mirrorEnabled = ctx.config.mode.kind === "local" || ctx.env.has("APP_CHAT_DATABASE_URL");
  return {
    host,
    store,
    chat: new ChatService(host, store, ctx.models, dataDir, ctx.log),
    sessions: new SessionService(host, store, dataDir, mirrorEnabled),
    attach: new AttachService(host, store, dataDir),
    provenance: new ProvenanceService(store),
    catalogs: new CatalogService(host, store, ctx.models, ctx.env, dataDir),
  };
}
