/**
 * The Files API over an owner's workspace `files/` namespace (stores/workspace-files.ts confines every
 * path), each write bounded by `storage.max_upload_bytes` and the owner's quota, and the read-only tree
 * of the mounted volume.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { ownerFolders } from "../../workspace/owner-folders.ts";
import { TurnWorkspaceFiles, treeOf } from "../stores/workspace-files.ts";
import type { TurnQuota } from "./quota.ts";

/** Most paths the volume tree lists. */
const TREE_LIMIT = 2000;

export interface TurnFileDeps {
  dataDir: string;
  /** Read per request: the policy's storage settings. */
  storage: PolicySettings["storage"];
  quota: Pick<TurnQuota, "reserver">;
}

/** The owner's workspace files, every write asking the owner's quota first. */
export function ownerFiles(deps: TurnFileDeps, owner: string): TurnWorkspaceFiles {
  return new TurnWorkspaceFiles(deps.dataDir, owner, deps.storage.max_upload_bytes, () =>
    deps.quota.reserver(owner),
  );
}

export class TurnFileService {
  constructor(private readonly deps: TurnFileDeps) {}

  forOwner(owner: string): TurnWorkspaceFiles {
    return ownerFiles(this.deps, owner);
  }

  list(owner: string, path: string) {
    return this.forOwner(owner).list(path);
  }

  stat(owner: string, path: string) {
    return this.forOwner(owner).stat(path);
  }

  /** One page of `storage.file_page_bytes` from `offset`. */
  readPage(owner: string, path: string, offset: number) {
    return this.forOwner(owner).readPage(path, offset, this.deps.storage.file_page_bytes);
  }

  put(owner: string, path: string, content: string, options: { sha256?: string; overwrite?: boolean }) {
    return this.forOwner(owner).put(path, content, options);
  }

  append(owner: string, path: string, content: string, options: { sha256?: string }) {
    return this.forOwner(owner).append(path, content, options);
  }

  patch(owner: string, path: string, old: string, replacement: string, options: { sha256?: string }) {
    return this.forOwner(owner).patch(path, old, replacement, options);
  }

  delete(owner: string, path: string, options: { sha256?: string }) {
    return this.forOwner(owner).delete(path, options);
  }

  /** Relative paths of the mounted volume: the owner's workspace folder holding `files/`. */
  volumeTree(owner: string) {
    return { root: "workspace", ...treeOf(ownerFolders(this.deps.dataDir, owner).workspace, TREE_LIMIT) };
  }
}
