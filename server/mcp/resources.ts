/**
 * The resources of Atrium's MCP server, read through the families' HTTP routes like the tools:
 * `atrium://files/{path}` (the user's workspace files, the turns Files API), `atrium://artifacts/{id}`
 * (what turns created) and `atrium://indexes/{name}` (a search index's report: documents, units,
 * entities, relationships, communities and their modularity, embeddings). The list holds the top folder's files and every index; artifacts are reached by the links
 * `run_python` returns.
 */

import { count } from "../../common/words.ts";
import type { AtriumHttp } from "./http.ts";

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: "atrium://files/{+path}",
    name: "file",
    description: "A file of the user's workspace files (UTF-8 text, one page)",
  },
  {
    uriTemplate: "atrium://artifacts/{id}",
    name: "artifact",
    description: "An artifact a turn created (its run_python result links it)",
  },
  {
    uriTemplate: "atrium://indexes/{name}",
    name: "index report",
    description:
      "A search index's report: its documents, entities, relationships, communities and modularity",
  },
];

/** Artifacts larger than this are not inlined; the answer names the URL to fetch them from. */
const MAX_INLINE_BYTES = 1024 * 1024;

export interface ResourceEntry {
  uri: string;
  name: string;
  mimeType?: string;
  description?: string;
}

export async function listResources(http: AtriumHttp): Promise<ResourceEntry[]> {
  const [files, indexes] = await Promise.all([
    http
      .json<{ items: { path: string; type: string; size: number }[] }>("GET", "/api/files")
      .catch(() => ({ items: [] })),
    http.json<{ indexes: { name: string; documents: number }[] }>("GET", "/search/indexes").catch(() => ({
      indexes: [],
    })),
  ]);
  return [
    ...files.items
      .filter((f) => f.type === "file")
      .map((f) => ({
        uri: `atrium://files/${encodePath(f.path)}`,
        name: f.path,
        description: `${f.size} bytes`,
      })),
    ...indexes.indexes.map((i) => ({
      uri: `atrium://indexes/${encodeURIComponent(i.name)}`,
      name: `index ${i.name}`,
      mimeType: "application/json",
      description: count(i.documents, "document"),
    })),
  ];
}

export type ResourceContent = { uri: string; mimeType?: string } & ({ text: string } | { blob: string });

export async function readResource(http: AtriumHttp, uri: string): Promise<ResourceContent> {
  const match = /^atrium:\/\/(files|artifacts|indexes)\/(.+)$/.exec(uri);
  if (!match)
    throw new Error(`Unknown resource '${uri}': Atrium's are atrium://files/…, artifacts/… and indexes/…`);
  const [, kind, rest] = match as unknown as [string, string, string];
  if (kind === "files") {
    const path = decodeURIComponent(rest);
    const page = await http.json<{ content: string }>(
      "GET",
      `/api/files/content?path=${encodeURIComponent(path)}`,
    );
    return { uri, mimeType: "text/plain", text: page.content };
  }
  if (kind === "artifacts") {
    const id = encodeURIComponent(decodeURIComponent(rest));
    const meta = await http.json<{ mediaType?: string; byteSize?: number }>("GET", `/api/artifacts/${id}`);
    if ((meta.byteSize ?? 0) > MAX_INLINE_BYTES)
      return {
        uri,
        mimeType: "text/plain",
        text: `Too large to inline: fetch ${http.origin}/api/artifacts/${id}/content`,
      };
    const body = await http.send("GET", `/api/artifacts/${id}/content`);
    const mimeType = meta.mediaType ?? body.headers.get("content-type") ?? "application/octet-stream";
    if (/^text\/|json|xml|markdown/.test(mimeType)) return { uri, mimeType, text: await body.text() };
    return { uri, mimeType, blob: Buffer.from(await body.arrayBuffer()).toString("base64") };
  }
  const name = decodeURIComponent(rest);
  const { indexes } = await http.json<{ indexes: { name: string }[] }>("GET", "/search/indexes");
  const index = indexes.find((i) => i.name === name);
  if (!index) throw new Error(`No index named '${name}'`);
  return { uri, mimeType: "application/json", text: JSON.stringify(index, null, 2) };
}

function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
