/**
 * Hierarchical communities: Louvain (graphology) over the entity graph, then each community larger than
 * `maxClusterSize` is split again by Louvain on its own subgraph, level by level, until every community
 * fits or cannot be split (GraphRAG does the same with Leiden, which npm lacks). Level 0 is the coarsest.
 * Entities without relationships belong to no community. Modularity is reported per level over the
 * whole graph, each level's partition completed by the deepest community of branches that ended earlier.
 * A seeded random source keeps the result the same for the same graph. graphology and Louvain load with
 * the first call, not at server start (docs/benchmarks.md, "Cold start").
 */
import type Graph from "graphology";

export interface CommunityEdge {
  source: number;
  target: number;
  weight: number;
}

export interface Community {
  /** Position in the returned list; parents come before their children. */
  index: number;
  level: number;
  parent: number | null;
  members: number[];
}

export interface Hierarchy {
  communities: Community[];
  levels: number;
  modularity: number[];
}

export async function hierarchicalCommunities(
  edges: CommunityEdge[],
  maxClusterSize = 10,
  seed = 0xc0ffee,
): Promise<Hierarchy> {
  const [{ default: Graph }, { default: louvain }] = await Promise.all([
    import("graphology"),
    import("graphology-communities-louvain"),
  ]);
  const graph = new Graph({ type: "undirected", multi: false });
  for (const { source, target, weight } of edges) {
    if (source === target) continue;
    const a = String(source);
    const b = String(target);
    graph.mergeNode(a);
    graph.mergeNode(b);
    if (graph.hasEdge(a, b)) graph.updateEdgeAttribute(a, b, "weight", (w) => (w ?? 0) + weight);
    else graph.addEdge(a, b, { weight });
  }
  const communities: Community[] = [];
  if (graph.order === 0) return { communities, levels: 0, modularity: [] };
  const rng = mulberry32(seed);

  let frontier: { nodes: string[]; parent: number | null }[] = [{ nodes: graph.nodes(), parent: null }];
  for (let level = 0; frontier.length > 0; level++) {
    const next: typeof frontier = [];
    for (const { nodes, parent } of frontier) {
      const groups = level === 0 ? split(louvain, graph, rng) : split(louvain, subgraph(graph, nodes), rng);
      if (level > 0 && groups.length < 2) continue; // cannot be split further: the parent is a leaf
      for (const group of groups) {
        const community: Community = { index: communities.length, level, parent, members: group.map(Number) };
        communities.push(community);
        if (group.length > maxClusterSize) next.push({ nodes: group, parent: community.index });
      }
    }
    frontier = next;
  }
  const levels = Math.max(...communities.map((c) => c.level)) + 1;
  const modularity: number[] = [];
  for (let level = 0; level < levels; level++)
    modularity.push(modularityOf(graph, partitionAt(communities, level)));
  return { communities, levels, modularity };
}

type Louvain = typeof import("graphology-communities-louvain").default;

function split(louvain: Louvain, graph: Graph, rng: () => number): string[][] {
  if (graph.size === 0) return graph.nodes().map((n) => [n]);
  const { communities } = louvain.detailed(graph, { getEdgeWeight: "weight", rng });
  const groups = new Map<number, string[]>();
  for (const [node, id] of Object.entries(communities)) {
    const group = groups.get(id);
    if (group) group.push(node);
    else groups.set(id, [node]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => Number(a) - Number(b)));
}

function subgraph(graph: Graph, nodes: string[]): Graph {
  const keep = new Set(nodes);
  const sub = graph.nullCopy(); // undirected and simple, as the whole graph is
  for (const n of nodes) sub.addNode(n);
  for (const n of nodes) {
    graph.forEachEdge(n, (_edge, attributes, source, target) => {
      if (source === n && keep.has(target) && !sub.hasEdge(source, target))
        sub.addEdge(source, target, attributes);
    });
  }
  return sub;
}

/** Node → community index at a level; nodes whose branch ended earlier keep their deepest community. */
export function partitionAt(communities: Community[], level: number): Map<string, number> {
  const partition = new Map<string, number>();
  for (const c of communities) {
    if (c.level > level) continue;
    for (const m of c.members) partition.set(String(m), c.index);
  }
  return partition;
}

/** Weighted modularity Q = Σ_c [ w_in(c)/m − (deg(c)/2m)² ]. */
export function modularityOf(graph: Graph, partition: Map<string, number>): number {
  let m = 0;
  const inside = new Map<number, number>();
  const degree = new Map<number, number>();
  graph.forEachEdge((_e, attributes, source, target) => {
    const w = (attributes.weight as number) ?? 1;
    m += w;
    const cs = partition.get(source);
    const ct = partition.get(target);
    if (cs === undefined || ct === undefined) return;
    degree.set(cs, (degree.get(cs) ?? 0) + w);
    degree.set(ct, (degree.get(ct) ?? 0) + w);
    if (cs === ct) inside.set(cs, (inside.get(cs) ?? 0) + w);
  });
  if (m === 0) return 0;
  let q = 0;
  for (const [c, d] of degree) q += (inside.get(c) ?? 0) / m - (d / (2 * m)) ** 2;
  return q;
}

/** A small seeded random source (mulberry32): the same seed, the same sequence. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
