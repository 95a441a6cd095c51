/** The agent workspace routes (`/api/workspace/*`): shapes follow the reference client's. Schemas only. */
import { t } from "elysia";
import { Integer } from "./common.ts";

export const WorkspaceHealth = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("degraded")]),
  workspaceAvailable: t.Boolean(),
  bootstrapComplete: t.Boolean(),
  projectionStatus: t.Union([t.Literal("ok"), t.Literal("degraded")]),
  workspacePath: t.String(),
  manifest: t.Object({
    path: t.String(),
    exists: t.Boolean(),
    valid: t.Boolean(),
    version: t.Union([t.Number(), t.Null()]),
  }),
  missing: t.Array(t.String(), { description: "canonical paths the contract requires that are missing" }),
  created: t.Array(t.String(), { description: "canonical paths this check created" }),
  projection: t.Object({ path: t.String(), file: t.String(), built: t.Boolean(), items: Integer() }),
});

/** One node of the tree; `children` holds nodes of the same shape (every directory has the array). */
const TreeNode = t.Object({
  name: t.String(),
  path: t.String({ description: "canonical path: agent-workspace/..." }),
  type: t.Union([t.Literal("directory"), t.Literal("file")]),
  children: t.Optional(t.Array(t.Unknown(), { description: "nested nodes of this same shape" })),
});

export const WorkspaceTree = t.Object({
  root: t.String(),
  nodes: t.Array(TreeNode),
  diagnostics: t.Array(t.String()),
});

export const FileQuery = t.Object({ path: t.Optional(t.String({ maxLength: 4096 })) });
export const WorkspaceFile = t.Object({
  path: t.String(),
  name: t.String(),
  content: t.String(),
  mediaType: t.Union([
    t.Literal("text/markdown"),
    t.Literal("text/plain"),
    t.Literal("application/octet-stream"),
  ]),
  size: Integer(),
  status: t.Union([t.Literal("ok"), t.Literal("too-large"), t.Literal("unsupported")]),
});

const ItemSummary = t.Object({
  id: t.String(),
  canonicalPath: t.String(),
  category: t.String(),
  sourceOfTruth: t.Union([t.Literal("canonical-files"), t.Literal("temporary-files")]),
  parserKind: t.String(),
  title: t.Union([t.String(), t.Null()]),
  summary: t.Union([t.String(), t.Null()]),
  currentVersionNumber: Integer(),
  currentParserVersion: Integer(),
  lastIndexedAt: t.String(),
  lastModifiedMs: t.Number(),
});

const ItemVersion = t.Object({
  id: t.String(),
  versionNumber: Integer(),
  parserVersion: Integer(),
  contentHash: t.String({ description: "sha256 hex of the file's bytes at this version" }),
  contentText: t.String(),
  metadata: t.Record(t.String(), t.Unknown()),
  indexedAt: t.String(),
});

export const WorkspaceItems = t.Object({
  ok: t.Literal(true),
  workspacePath: t.String(),
  total: Integer(),
  items: t.Array(ItemSummary),
});
export const ItemQuery = t.Object({ id: t.Optional(t.String({ maxLength: 128 })) });
export const WorkspaceItem = t.Object({
  ok: t.Literal(true),
  workspacePath: t.String(),
  item: t.Composite([
    ItemSummary,
    t.Object({
      currentContentHash: t.String(),
      byteSize: Integer(),
      firstIndexedAt: t.String(),
      content: t.String(),
      version: ItemVersion,
      versions: t.Array(t.Omit(ItemVersion, ["contentText"]), {
        description: "Every kept version, newest first (at most 100), without their text",
      }),
    }),
  ]),
});
export const SearchQuery = t.Object({ q: t.Optional(t.String({ maxLength: 1000 })) });
export const WorkspaceSearch = t.Object({
  ok: t.Literal(true),
  workspacePath: t.String(),
  query: t.String(),
  total: Integer(),
  hits: t.Array(t.Composite([ItemSummary, t.Object({ itemId: t.String(), snippet: t.String() })])),
});
export const CsrfToken = t.Object({ csrfToken: t.String() });
export const Reindexed = t.Object({
  ok: t.Literal(true),
  outcome: t.Literal("complete"),
  completion: t.Literal("complete"),
  recordedAt: t.String(),
  workspacePath: t.String(),
  counts: t.Object({
    scanned: Integer(),
    inserted: Integer(),
    updated: Integer(),
    unchanged: Integer(),
    deleted: Integer(),
    reactivated: Integer(),
  }),
});
