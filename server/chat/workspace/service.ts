/**
 * The workspace routes' service: opens the caller's agent workspace once per request (bootstrapping
 * it) and answers health, tree, file, items, item, search and reindex from that one descriptor, closed
 * when the answer is ready. No Elysia context; one owner per call.
 */
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { AppError } from "../../http/errors.ts";
import type { Beneath } from "../../workspace/beneath.ts";
import { type Bootstrap, canonical, WORKSPACE_DIR, withAgentWorkspace, workspaceRoot } from "./contract.ts";
import { readWorkspaceFile, tree } from "./files.ts";
import { getItem, listItems, PROJECTION_FILE, projectionExists, reindex, search } from "./projection.ts";

const unavailable = () => new AppError("unavailable", "Workspace is unavailable.");
const degraded = () => new AppError("unavailable", "Workspace projection is degraded.");

export class WorkspaceService {
  constructor(private readonly dataDir: string) {}

  /**
   * Runs `work` on the owner's agent workspace, opened (created and bootstrapped) beneath their
   * workspace folder; 503 when it cannot be used safely (the sandbox put a link or a file there).
   */
  private at<T>(owner: string, work: (aw: Beneath, boot: Bootstrap, root: string) => T): T {
    const root = workspaceRoot(this.dataDir, owner);
    try {
      return withAgentWorkspace(root, (aw, boot) => work(aw, boot, root));
    } catch (error) {
      // The kernel refused a name mid-request (the sandbox swapped a folder for a link meanwhile).
      if (error instanceof AppError) throw error;
      throw unavailable();
    }
  }

  health(owner: string) {
    return this.at(owner, (aw, boot) => {
      let projectionStatus: "ok" | "degraded" = "ok";
      let items = 0;
      try {
        items = listItems(aw).length;
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
          built: projectionExists(aw),
          items,
        },
      };
    });
  }

  tree(owner: string) {
    return this.at(owner, (aw) => tree(aw));
  }

  file(owner: string, path: string | undefined) {
    return this.at(owner, (aw, _boot, root) => readWorkspaceFile(aw, path, insidePaths(root)));
  }

  items(owner: string) {
    const items = this.projected(owner, (aw) => listItems(aw));
    return { ok: true as const, workspacePath: canonical(""), total: items.length, items };
  }

  item(owner: string, id: string | undefined) {
    if (!id?.trim()) throw new AppError("invalid", "Missing workspace item id.");
    const item = this.projected(owner, (aw) => getItem(aw, id.trim()));
    if (!item) throw new AppError("not_found", "Workspace item was not found.");
    return { ok: true as const, workspacePath: canonical(""), item };
  }

  search(owner: string, q: string | undefined) {
    const query = q?.trim() ?? "";
    if (!query) throw new AppError("invalid", "Missing workspace search query.");
    const hits = this.projected(owner, (aw) => search(aw, query));
    return { ok: true as const, workspacePath: canonical(""), query, total: hits.length, hits };
  }

  reindex(owner: string) {
    const counts = this.at(owner, (aw) => guarded(() => reindex(aw)));
    return {
      ok: true as const,
      outcome: "complete" as const,
      completion: "complete" as const,
      recordedAt: new Date().toISOString(),
      workspacePath: canonical(""),
      counts,
    };
  }

  /** Reads the projection, built on first use (it is only ever derived from the canonical files). */
  private projected<T>(owner: string, read: (aw: Beneath) => T): T {
    return this.at(owner, (aw) => {
      guarded(() => {
        if (!projectionExists(aw)) reindex(aw);
      });
      return guarded(() => read(aw));
    });
  }
}

function guarded<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw degraded();
  }
}

/**
 * The absolute paths an absolute symlink made on the host would use for the agent workspace: as the
 * server names it, and with the owner's workspace folder's symlinks resolved (that folder is the
 * server's, not the sandbox's, so resolving it by name is safe; the agent workspace itself is not).
 */
function insidePaths(root: string): string[] {
  try {
    return [...new Set([root, join(realpathSync(dirname(root)), WORKSPACE_DIR)])];
  } catch {
    return [root];
  }
}
