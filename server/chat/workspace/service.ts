/**
 * The workspace routes' service: resolves the caller's agent workspace (bootstrapping it), and answers
 * health, tree, file, items, item, search and reindex. No Elysia context; one owner per call.
 */
import { lstatSync } from "node:fs";
import { AppError } from "../../http/errors.ts";
import { bootstrap, canonical, realParents, workspaceRoot } from "./contract.ts";
import { readWorkspaceFile, tree } from "./files.ts";
import { getItem, listItems, PROJECTION_FILE, projectionExists, reindex, search } from "./projection.ts";

const unavailable = () => new AppError("unavailable", "Workspace is unavailable.");

export class WorkspaceService {
  constructor(private readonly dataDir: string) {}

  /** The owner's workspace folder, created and bootstrapped; 503 when it cannot be used safely. */
  private root(owner: string): { root: string; boot: ReturnType<typeof bootstrap> } {
    const root = workspaceRoot(this.dataDir, owner);
    if (!realParents(root, "")) throw unavailable();
    try {
      const boot = bootstrap(root);
      if (!lstatSync(root).isDirectory()) throw unavailable();
      return { root, boot };
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw unavailable();
    }
  }

  health(owner: string) {
    const { root, boot } = this.root(owner);
    let projectionStatus: "ok" | "degraded" = "ok";
    let items = 0;
    try {
      items = listItems(root).length;
    } catch {
      projectionStatus = "degraded";
    }
    const bootstrapComplete = boot.manifest.valid && boot.missing.length === 0;
    return {
      status: bootstrapComplete && projectionStatus === "ok" ? ("ok" as const) : ("degraded" as const),
      workspaceAvailable: true,
      bootstrapComplete,
      projectionStatus,
      workspacePath: canonical(""),
      manifest: { path: canonical("manifest.json"), ...boot.manifest },
      missing: boot.missing,
      created: boot.created,
      projection: {
        path: canonical("indexes"),
        file: canonical(PROJECTION_FILE),
        built: projectionExists(root),
        items,
      },
    };
  }

  tree(owner: string) {
    return tree(this.root(owner).root);
  }

  file(owner: string, path: string | undefined) {
    return readWorkspaceFile(this.root(owner).root, path);
  }

  /** The projection's root, built on first use (it is only ever derived from the canonical files). */
  private projected(owner: string): string {
    const { root } = this.root(owner);
    try {
      if (!projectionExists(root)) reindex(root);
    } catch {
      throw new AppError("unavailable", "Workspace projection is degraded.");
    }
    return root;
  }

  items(owner: string) {
    const items = this.guarded(() => listItems(this.projected(owner)));
    return { ok: true as const, workspacePath: canonical(""), total: items.length, items };
  }

  item(owner: string, id: string | undefined) {
    if (!id?.trim()) throw new AppError("invalid", "Missing workspace item id.");
    const item = this.guarded(() => getItem(this.projected(owner), id.trim()));
    if (!item) throw new AppError("not_found", "Workspace item was not found.");
    return { ok: true as const, workspacePath: canonical(""), item };
  }

  search(owner: string, q: string | undefined) {
    const query = q?.trim() ?? "";
    if (!query) throw new AppError("invalid", "Missing workspace search query.");
    const hits = this.guarded(() => search(this.projected(owner), query));
    return { ok: true as const, workspacePath: canonical(""), query, total: hits.length, hits };
  }

  reindex(owner: string) {
    const { root } = this.root(owner);
    const counts = this.guarded(() => reindex(root));
    return {
      ok: true as const,
      outcome: "complete" as const,
      completion: "complete" as const,
      recordedAt: new Date().toISOString(),
      workspacePath: canonical(""),
      counts,
    };
  }

  private guarded<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError("unavailable", "Workspace projection is degraded.");
    }
  }
}
