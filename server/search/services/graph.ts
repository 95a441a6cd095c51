/**
 * The search family's graph view service: an index's merged graph in the compact, columnar form the web
 * UI draws with sigma (entities sized by degree, coloured by community, laid out here so the browser only
 * draws), and one entity's details (description, sources, neighbours) for a click on it.
 *
 * Layout is circle packing by community (graphology-layout): O(n log n), a few tens of milliseconds at
 * 10,000 entities, and it shows what the communities are; a force layout would cost seconds. The result
 * is cached per index version, so opening the view again costs only the JSON. graphology and the layout
 * load with the first view, not at server start (docs/benchmarks.md, "Cold start").
 */
import { DEFAULT_GRAPH_ENTITIES, type GraphEntity, type IndexGraph } from "../../../schemas/search.ts";
import { AppError } from "../../http/errors.ts";
import { mulberry32 } from "../indexing/communities.ts";
import type { SearchGraphStore } from "../stores/graph-store.ts";
import type { SearchStore } from "../stores/search-store.ts";
import { clip } from "../text.ts";
import type { IndexRow } from "../types.ts";

/** Most edges sent with a graph: beyond this the drawing is a hairball and the JSON megabytes. */
export const MAX_GRAPH_EDGES = 50_000;
const SOURCES = 5;
const RELATED = 10;
const SOURCE_CHARS = 400;
/** Layouts kept (per index version and limit): a few open views, not every index ever drawn. */
const CACHED_LAYOUTS = 4;

type GraphView = typeof IndexGraph.static;

export class SearchGraphService {
  private readonly cache = new Map<string, GraphView>();

  constructor(
    private readonly search: SearchStore,
    private readonly graph: SearchGraphStore,
  ) {}

  /** The `limit` most connected entities of one of the owner's indexes and the relationships among them. */
  async view(ownerId: string, indexName: string, limit = DEFAULT_GRAPH_ENTITIES): Promise<GraphView> {
    const index = await this.index(ownerId, indexName);
    const key = `${index.id}\u0000${index.updated_at}\u0000${limit}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const view = await this.build(index, limit);
    this.cache.set(key, view);
    for (const old of this.cache.keys()) {
      if (this.cache.size <= CACHED_LAYOUTS) break;
      this.cache.delete(old);
    }
    return view;
  }

  /** One entity by citation id: its description, the passages that mention it, its heaviest ties. */
  async entity(ownerId: string, indexName: string, humanId: number): Promise<typeof GraphEntity.static> {
    const index = await this.index(ownerId, indexName);
    const row = await this.graph.entityByHumanId(index, humanId);
    if (!row) throw AppError.notFound(`Index '${indexName}' has no entity ${humanId}`);
    const unitIds = (JSON.parse(row.unit_ids) as number[]).slice(0, SOURCES);
    const units = new Map((await this.search.units(index, unitIds)).map((u) => [u.id, u]));
    const related = (await this.graph.relationshipsTouching(index, [row.id], RELATED)).map((r) => {
      const other = r.source_id === row.id ? r.target_id : r.source_id;
      return { other, weight: r.weight };
    });
    const neighbours = new Map(
      (
        await this.graph.entities(
          index,
          related.map((r) => r.other),
        )
      ).map((e) => [e.id, e]),
    );
    return {
      id: row.human_id,
      name: row.name,
      type: row.type,
      description: row.description,
      degree: row.degree,
      mentions: row.mentions,
      sources: unitIds.flatMap((id) => {
        const unit = units.get(id);
        return unit ? [{ id, document: unit.title, text: around(unit.text, row.name) }] : [];
      }),
      related: related.flatMap(({ other, weight }) => {
        const e = neighbours.get(other);
        return e ? [{ id: e.human_id, name: e.name, weight }] : [];
      }),
    };
  }

  private async index(ownerId: string, name: string): Promise<IndexRow> {
    const index = await this.search.findIndex(ownerId, name);
    if (!index) throw AppError.notFound(`No index '${name}'`);
    return index;
  }

  private async build(index: IndexRow, limit: number): Promise<GraphView> {
    const counts = await this.graph.counts(index);
    const rows = await this.graph.graphEntities(index, limit);
    // Community row ids → citation ids; an entity's list holds its community at each level, coarsest first.
    const communities = new Map((await this.graph.communities(index)).map((c) => [c.id, c]));
    const position = new Map(rows.map((r, i) => [r.id, i]));
    const source: number[] = [];
    const target: number[] = [];
    const weight: number[] = [];
    let between = 0;
    for (const e of await this.graph.graphEdges(index)) {
      const s = position.get(e.source_id);
      const t = position.get(e.target_id);
      if (s === undefined || t === undefined) continue;
      between++;
      if (source.length >= MAX_GRAPH_EDGES) continue;
      source.push(s);
      target.push(t);
      weight.push(e.weight);
    }

    const [{ default: Graph }, { default: circlepack }] = await Promise.all([
      import("graphology"),
      import("graphology-layout/circlepack"),
    ]);
    const layout = new Graph({ type: "undirected", multi: true });
    const community: number[] = [];
    rows.forEach((r, i) => {
      const levels = (JSON.parse(r.community_ids) as number[])
        .map((id) => communities.get(id))
        .filter((c) => c !== undefined)
        .sort((a, b) => a.level - b.level);
      community.push(levels[0]?.human_id ?? -1);
      layout.addNode(String(i), {
        size: nodeSize(r.degree),
        c0: levels[0]?.human_id ?? -1,
        c1: levels[1]?.human_id ?? -1,
      });
    });
    const at = circlepack(layout, { hierarchyAttributes: ["c0", "c1"], rng: mulberry32(index.id) });
    const round = (v: number) => Math.round(v * 100) / 100;

    const notes: string[] = [];
    if (rows.length < counts.entities)
      notes.push(
        `Showing the ${rows.length} most connected of ${counts.entities} entities (ask for up to the limit with ?limit=).`,
      );
    if (between > source.length)
      notes.push(`Showing the ${source.length} heaviest of ${between} relationships between them.`);
    return {
      index: index.name,
      entities: counts.entities,
      relationships: counts.relationships,
      ...(notes.length > 0 ? { note: notes.join(" ") } : {}),
      nodes: {
        id: rows.map((r) => r.human_id),
        name: rows.map((r) => r.name),
        type: rows.map((r) => r.type),
        degree: rows.map((r) => r.degree),
        community,
        x: rows.map((_, i) => round(at[String(i)]?.x ?? 0)),
        y: rows.map((_, i) => round(at[String(i)]?.y ?? 0)),
      },
      edges: { source, target, weight },
    };
  }
}

/** A node's radius for the layout and the drawing: grows with the square root of its degree. */
export function nodeSize(degree: number): number {
  return 2 + Math.sqrt(degree) * 1.5;
}

/** The stretch of a unit's text around the entity's first mention, clipped at whole words. */
function around(text: string, name: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const at = flat.toLowerCase().indexOf(name.toLowerCase());
  if (at < SOURCE_CHARS / 2) return clip(flat, SOURCE_CHARS);
  // Start at the sentence (else the word) before the mention, so the passage never opens mid-word.
  const window = flat.slice(0, at);
  const sentence = Math.max(window.lastIndexOf(". "), window.lastIndexOf("! "), window.lastIndexOf("? "));
  const start =
    sentence >= 0 && at - sentence < SOURCE_CHARS / 2 ? sentence + 2 : window.lastIndexOf(" ", at - 40) + 1;
  return `…${clip(flat.slice(start), SOURCE_CHARS)}`;
}
