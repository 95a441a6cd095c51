/**
 * Everything the turns routes and runtime share, built once per app: the store, assets, the sandbox pool,
 * the live runs, tracing, analytics, and the policy settings resolved at startup.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { PolicySettings } from "../config/policy-schema.ts";
import type { AppContext } from "../context.ts";
import type { Logger } from "../log.ts";
import { openAiCompatibleModel } from "../models/compatible.ts";
import { offlineReply } from "../models/offline.ts";
import type { ModelService } from "../models/service.ts";
import type { SandboxPool } from "../sandbox/pool.ts";
import { ownerFolders } from "../workspace/owner-folders.ts";
import { Analytics } from "./analytics.ts";
import { Assets } from "./assets.ts";
import { WorkspaceFiles } from "./files.ts";
import { LiveRuns } from "./live-run.ts";
import { OwnerQuota } from "./quota.ts";
import { TurnStore } from "./store.ts";
import { Tracer } from "./tracing.ts";

export class TurnServices {
  readonly store: TurnStore;
  readonly assets: Assets;
  readonly live = new LiveRuns();
  readonly tracer: Tracer;
  readonly analytics: Analytics;
  readonly settings: PolicySettings;
  readonly models: ModelService;
  readonly log: Logger;
  readonly quota: OwnerQuota;
  /** Started by the family's start hook (it spawns processes); routes wait for it through `sandbox()`. */
  pool: SandboxPool | undefined;

  constructor(readonly ctx: AppContext) {
    this.store = new TurnStore(ctx.store);
    this.assets = new Assets(ctx.store, ctx.config.dataDir);
    this.settings = ctx.config.policy.settings;
    this.models = ctx.models;
    this.log = ctx.log;
    this.quota = new OwnerQuota(
      ctx.store,
      (owner) => ownerFolders(ctx.config.dataDir, owner).files,
      this.settings.storage.workspace_quota_bytes,
    );
    const secrets = Object.values(ctx.config.policy.secrets).filter(
      (v): v is string => typeof v === "string",
    );
    this.tracer = new Tracer(ctx.store, this.settings.tracing, secrets);
    this.analytics = new Analytics({
      enabled: this.settings.analytics.enabled,
      host: this.settings.analytics.host,
      token: ctx.config.policy.secrets.analyticsToken,
      dataDir: ctx.config.dataDir,
      log: ctx.log,
    });
  }

  private warming = false;

  /** Starts the warm interpreters once, in the background (a listening server, right after composing). */
  warmSandbox(): void {
    if (this.warming || !this.pool) return;
    this.warming = true;
    void this.pool.warm();
  }

  files(owner: string): WorkspaceFiles {
    return new WorkspaceFiles(
      this.ctx.config.dataDir,
      owner,
      this.settings.storage.max_upload_bytes,
      (adding, replacing) => this.quota.check(owner, adding, replacing),
    );
  }

  /** The mounted volume of an owner: the workspace folder holding `files/`. */
  volumeRoot(owner: string): string {
    return ownerFolders(this.ctx.config.dataDir, owner).workspace;
  }

  /**
   * The turn model: the policy's `model.id`, else the server default. With the policy's base URL
   * variable set, a bare id names a model of that OpenAI-compatible endpoint (`openai/<id>`), called
   * with the policy's key variable; an id with an explicit `provider/` prefix resolves as everywhere.
   */
  turnModel(): Model<Api> {
    const { id } = this.settings.model;
    const { modelBaseUrl, modelApiKey } = this.ctx.config.policy.secrets;
    if (modelBaseUrl && id && !id.includes("/")) {
      const model = openAiCompatibleModel({
        id,
        name: `${id} (${modelBaseUrl})`,
        provider: "openai",
        baseUrl: modelBaseUrl,
      });
      this.models.register(model, { apiKey: modelApiKey });
      return model;
    }
    return this.models.resolve(id || this.models.defaultModel().id);
  }

  offlineReply(text: string): string {
    return offlineReply({ messages: [{ role: "user", content: text, timestamp: 0 }] });
  }

  /** Best-effort promotion of memory proposals after a successful commit: one Markdown file per category. */
  promoteMemories(owner: string, memories: { category: string; text: string }[]): void {
    if (memories.length === 0) return;
    try {
      const files = this.files(owner);
      for (const m of memories)
        files.append(`memories/${m.category}.md`, `- ${m.text.replaceAll("\n", " ")}\n`);
    } catch (error) {
      this.log.warn("memory promotion failed", { error: (error as Error).message });
    }
  }
}
