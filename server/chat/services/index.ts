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
import { SettingsService } from "./settings.ts";

export interface ChatServices {
  host: RuntimeHost;
  store: ChatStore;
  chat: ChatService;
  sessions: SessionService;
  attach: AttachService;
  provenance: ProvenanceService;
  catalogs: CatalogService;
  settings: SettingsService;
}

export interface ChatServiceOptions {
  maxIdleSessions?: number;
  idleMs?: number;
}

export function createChatServices(ctx: AppContext, options: ChatServiceOptions = {}): ChatServices {
  const store = new ChatStore(ctx.store);
  const dataDir = ctx.config.dataDir;
  // The owner's own machine: shell commands on the host, and settings that name extensions and
  // packages in the owner's pi agent dir. Protected mode has neither.
  const local = ctx.config.mode.kind === "local";
  const host = new RuntimeHost({
    dataDir,
    models: ctx.models,
    env: ctx.env,
    store,
    log: ctx.log,
    hostCommands: local,
    settingsCode: local,
    // Shell commands run in the sandbox's jail, with the policy's limits and network (shell.ts).
    shell: shellOptions(ctx.config.policy.settings.sandbox),
    ...options,
  });
  // Local mode always mirrors; protected mode mirrors when a chat database is configured (DESIGN.md 5).
  const mirrorEnabled = local || ctx.env.has("APP_CHAT_DATABASE_URL");
  const settings = new SettingsService(host, ctx.models, dataDir, local);
  return {
    host,
    store,
    chat: new ChatService(host, store, ctx.models, dataDir, ctx.log),
    sessions: new SessionService(host, store, dataDir, mirrorEnabled),
    attach: new AttachService(host, store, dataDir),
    provenance: new ProvenanceService(store),
    catalogs: new CatalogService(host, store, ctx.models, ctx.env, dataDir, settings),
    settings,
  };
}
