/**
 * GraphRAG's local search context: the query is mapped to entities (FTS5 BM25 over names and
 * descriptions), then packed under a token budget (default 12,000): community reports of those entities
 * (15%), the entities and their relationships (in-network first, then by links to the set, then weight),
 * and the text units they came from (50%). Every table row says whether it made it into the context
 * (`in_context`). The text units are ordered by the best passage they hold for the question (retrieve.ts:
 * BM25 over the units and the matched entities' units, sentences scored on the question's rarest terms
 * near an answer of the type it asks for), so the fact a model needs is in what fits the budget.
 */
import type { SearchGraphStore } from "../stores/graph-store.ts";
import { estimateTokens } from "../text.ts";
import type { EntityRow, IndexRow, RelationshipRow } from "../types.ts";
import { rememberedSearch as remembered } from "./index-stats.ts";
import type { Passage } from "./passages.ts";
import { analyseQuestion, type Question } from "./question.ts";
import { retrievePassages, type SearchStores } from "./retrieve.ts";
import { subjectOf } from "./subject.ts";
import { ftsMatch } from "./terms.ts";

/** Units of the matched entities read for passages (beside those BM25 finds). */
const MAX_ENTITY_UNITS = 24;

export interface LocalContextOptions {
  maxTokens?: number;
  topKEntities?: number;
  topKRelationships?: number;
  communityShare?: number;
  unitShare?: number;
  /** Entities nearest to the query by embedding, nearest first: blended with BM25 (reciprocal ranks). */
  vectorRanked?: { id: number }[];
}

export type ContextRow = Record<string, string | number | boolean>;

export interface ContextTables {
  reports: ContextRow[];
  entities: ContextRow[];
  relationships: ContextRow[];
  claims: ContextRow[];
  sources: ContextRow[];
}

export interface LocalContext {
  text: string;
  tables: ContextTables;
  entities: EntityRow[];
  relationships: RelationshipRow[];
  sources: { id: number; text: string; title: string }[];
  question: Question;
  /** The scored sentences of the in-context sources, best first. */
  passages: Passage[];
}

/** The two stores a query reads: units and sources, and the graph. */
export type { SearchStores } from "./retrieve.ts";

export function emptyTables(): ContextTables {
  return { reports: [], entities: [], relationships: [], claims: [], sources: [] };
}

export async function buildLocalContext(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  options: LocalContextOptions = {},
): Promise<LocalContext> {
  const {
    maxTokens = 12_000,
    topKEntities = 10,
    topKRelationships = 10,
    communityShare = 0.15,
    unitShare = 0.5,
  } = options;
  const { graph, search } = stores;
  const tables = emptyTables();
  const match = ftsMatch(query);
  const bm25 = match
    ? await remembered(graph, index, "entities", match, topKEntities, () =>
        graph.matchEntities(index, match, topKEntities),
      )
    : [];
  const ranked = options.vectorRanked?.length ? fuse(bm25, options.vectorRanked, topKEntities) : bm25;
  const byId = new Map(
    (
      await graph.entities(
        index,
        ranked.map((r) => r.id),
      )
    ).map((e) => [e.id, e]),
  );
  // Entities the query names come first (GraphRAG maps a query to entities by name as well as by text):
  // "Who is Jacob Marley?" is about Jacob Marley before the Ghost of Jacob Marley.
  const selected = ranked.map((r) => byId.get(r.id)).filter((e): e is EntityRow => e !== undefined);
  const subject = subjectOf(selected, query);
  if (subject) selected.splice(0, selected.length, subject, ...selected.filter((e) => e !== subject));
  const sections: string[] = [];

  // Reports of the communities holding the most selected entities.
  const hits = new Map<number, number>();
  for (const e of selected)
    for (const c of JSON.parse(e.community_ids) as number[]) hits.set(c, (hits.get(c) ?? 0) + 1);
  const communities = [...hits.keys()];
  const reports = [
    ...(await remembered(graph, index, "reports", communities.join(","), 0, () =>
      graph.reportsForCommunities(index, communities),
    )),
  ].sort(
    (a, b) =>
      (hits.get(b.community_id) ?? 0) - (hits.get(a.community_id) ?? 0) ||
      b.rating - a.rating ||
      b.level - a.level,
  );
  const reportPack = packer(maxTokens * communityShare, "id|title|content");
  for (const r of reports) {
    const row = { id: String(r.human_id), title: r.title, content: r.content };
    tables.reports.push({
      ...row,
      rank: r.rating,
      in_context: reportPack.add(`${row.id}|${row.title}|${row.content}`),
    });
  }
  if (reportPack.used()) sections.push(`-----Reports-----\n${reportPack.text()}`);

  // Entities, then relationships: in-network first, then those with most links into the set.
  const entityBudget = maxTokens * (1 - communityShare - unitShare);
  const entityPack = packer(entityBudget, "id|entity|description|number of relationships");
  for (const e of selected) {
    const row = {
      id: String(e.human_id),
      entity: e.name,
      description: e.description,
      "number of relationships": e.degree,
    };
    tables.entities.push({
      ...row,
      in_context: entityPack.add(`${row.id}|${e.name}|${e.description}|${e.degree}`),
    });
  }
  if (entityPack.used()) sections.push(`-----Entities-----\n${entityPack.text()}`);
  const relationships = await rankRelationships(graph, index, selected, topKRelationships);
  const relationPack = packer(
    Math.max(0, entityBudget - entityPack.tokens()),
    "id|source|target|description|weight|links",
  );
  for (const { rel, links } of relationships) {
    const row = {
      id: String(rel.human_id),
      source: rel.source,
      target: rel.target,
      description: rel.description,
      weight: rel.weight,
      links,
    };
    tables.relationships.push({
      ...row,
      in_context: relationPack.add(
        `${row.id}|${rel.source}|${rel.target}|${rel.description}|${rel.weight}|${links}`,
      ),
    });
  }
  if (relationPack.used()) sections.push(`-----Relationships-----\n${relationPack.text()}`);

  // Text units: those holding the best passages for the question first (its rarest terms near an answer
  // of the type it asks for), then those of the first-ranked entities, then those many entities share.
  const unitOrder = new Map<number, { first: number; shared: number }>();
  selected.forEach((e, rank) => {
    for (const unitId of JSON.parse(e.unit_ids) as number[]) {
      const seen = unitOrder.get(unitId);
      if (seen) seen.shared++;
      else unitOrder.set(unitId, { first: rank, shared: 1 });
    }
  });
  const entityUnits = [...unitOrder.entries()]
    .sort((a, b) => a[1].first - b[1].first || b[1].shared - a[1].shared)
    .map(([id]) => id);
  const question = analyseQuestion(query);
  const retrieved = await retrievePassages(stores, index, question, entityUnits.slice(0, MAX_ENTITY_UNITS));
  const unitIds = [...new Set([...retrieved.ranked, ...entityUnits])].slice(0, 50);
  const missing = unitIds.filter((id) => !retrieved.units.has(id));
  const units = new Map([
    ...retrieved.units,
    ...(await search.units(index, missing)).map((u) => [u.id, u] as const),
  ]);
  const unitPack = packer(maxTokens * unitShare, "id|text");
  const sources: LocalContext["sources"] = [];
  for (const id of unitIds) {
    const unit = units.get(id);
    if (!unit) continue;
    const inContext = unitPack.add(`${unit.id}|${unit.text}`, unit.tokens);
    tables.sources.push({ id: String(unit.id), text: unit.text, in_context: inContext });
    if (inContext) sources.push({ id: unit.id, text: unit.text, title: unit.title });
  }
  if (unitPack.used()) sections.push(`-----Sources-----\n${unitPack.text()}`);

  return {
    text: sections.join("\n\n"),
    tables,
    entities: selected,
    relationships: relationships.filter((_r, i) => tables.relationships[i]?.in_context).map((r) => r.rel),
    sources,
    question,
    passages: retrieved.passages.filter((p) => sources.some((u) => u.id === p.unit)),
  };
}

/** Reciprocal rank fusion of two rankings (k = 60): what both rank high comes first. */
export function fuse(
  a: readonly { id: number }[],
  b: readonly { id: number }[],
  limit: number,
): { id: number }[] {
  const score = new Map<number, number>();
  for (const list of [a, b])
    for (const [rank, { id }] of list.entries()) score.set(id, (score.get(id) ?? 0) + 1 / (60 + rank));
  return [...score.entries()]
    .sort((x, y) => y[1] - x[1] || x[0] - y[0])
    .slice(0, limit)
    .map(([id]) => ({ id }));
}

async function rankRelationships(
  graph: SearchGraphStore,
  index: IndexRow,
  selected: EntityRow[],
  topK: number,
) {
  const ids = new Set(selected.map((e) => e.id));
  const limit = topK * Math.max(1, selected.length) * 2;
  const touching = await remembered(graph, index, "relationships", [...ids].join(","), limit, () =>
    graph.relationshipsTouching(index, [...ids], limit),
  );
  const inNetwork = touching.filter((r) => ids.has(r.source_id) && ids.has(r.target_id));
  const outside = touching.filter((r) => !(ids.has(r.source_id) && ids.has(r.target_id)));
  // links: how many selected entities the outside end of a relationship is tied to.
  const links = new Map<number, number>();
  for (const r of outside) {
    const other = ids.has(r.source_id) ? r.target_id : r.source_id;
    links.set(other, (links.get(other) ?? 0) + 1);
  }
  const linkOf = (r: RelationshipRow) => links.get(ids.has(r.source_id) ? r.target_id : r.source_id) ?? 0;
  inNetwork.sort((a, b) => b.weight - a.weight || b.rank - a.rank);
  outside.sort((a, b) => linkOf(b) - linkOf(a) || b.weight - a.weight || b.rank - a.rank);
  return [
    ...inNetwork.map((rel) => ({ rel, links: 2 })),
    ...outside.slice(0, topK * Math.max(1, selected.length)).map((rel) => ({ rel, links: linkOf(rel) })),
  ];
}

/** Accumulates table lines while they fit the budget; a line that does not fit is left out. */
function packer(budget: number, header: string) {
  const lines: string[] = [];
  let tokens = estimateTokens(header);
  return {
    add(line: string, known?: number): boolean {
      const cost = (known ?? estimateTokens(line)) + 1;
      if (tokens + cost > budget) return false;
      lines.push(line);
      tokens += cost;
      return true;
    },
    used: () => lines.length > 0,
    tokens: () => tokens,
    text: () => `${header}\n${lines.join("\n")}`,
  };
}
