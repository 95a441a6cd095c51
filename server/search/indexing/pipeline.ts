/**
 * The indexing pipeline: documents → text units → extraction (model or offline) → merged graph →
 * hierarchical communities → community reports → FTS5, stored per owner and named index.
 *
 * Incremental: a document whose content hash is unchanged is skipped, and when nothing changed the run
 * does no work at all; a changed document replaces its units and their extractions, and a removed one
 * (`remove`) takes its units and extractions with it. Extraction results are kept per unit, so the graph
 * is re-merged from stored extractions without re-extracting unchanged text (an entity or relationship
 * only a removed document supported goes with it); an unchanged community keeps its report, so only the
 * communities a change touched get a new one.
 */
import type { IndexSummary } from "../../../schemas/search.ts";
import type { EmbeddingsClient } from "../../models/embeddings.ts";
import type { ModelChoice } from "../model-calls.ts";
import type { CommunityToWrite } from "../stores/graph-communities.ts";
import { SearchGraphStore } from "../stores/graph-store.ts";
import type { SearchStore } from "../stores/search-store.ts";
import type { Extraction, IndexRow, MergedEntity, MergedRelationship, RelationshipRow } from "../types.ts";
import { withoutLicence } from "./boilerplate.ts";
import { hierarchicalCommunities } from "./communities.ts";
import { type InputDocument, rejectReason } from "./documents.ts";
import { embedEntities } from "./embed.ts";
import { extractWithModel } from "./extract-model.ts";
import { extractOffline, profileDocument } from "./extract-offline.ts";
import { mergeGraph } from "./merge.ts";
import { modelReport, offlineReport, type ReportInput, reportContent } from "./reports.ts";
import { DEFAULT_UNITS, splitUnits, type UnitOptions } from "./units.ts";

export type Phase = "units" | "extraction" | "communities" | "reports";

export interface IndexOptions {
  /** Model-driven extraction and reports; offline (names.ts cues, extractive reports) when absent. */
  model?: ModelChoice & { maxGleanings?: number };
  units?: UnitOptions;
  maxClusterSize?: number;
  onProgress?: (phase: Phase, done: number, total: number) => void;
  /** Embeds entity descriptions for vector search when the policy names an embeddings endpoint. */
  embeddings?: EmbeddingsClient;
  signal?: AbortSignal;
  /** Titles of documents to take out of the index in this run (their units, extractions, what only they support). */
  remove?: string[];
}

/**
 * Offline extraction sees many one-off capitalised words; a name must recur to count, except in an index of
 * a few short notes, where nearly every name is said once ("Ada Lovelace worked with Charles Babbage").
 */
const OFFLINE_MIN_MENTIONS = 2;
const SHORT_INDEX_TOKENS = 1000;
/** Below this many entities there is no graph to speak of: the summary says so. */
const SMALL_GRAPH = 2;

export async function runIndex(
  store: SearchStore,
  ownerId: string,
  name: string,
  documents: InputDocument[],
  options: IndexOptions = {},
): Promise<IndexSummary> {
  const started = performance.now();
  const progress = options.onProgress ?? (() => {});
  const graph = new SearchGraphStore(store.db);
  const index = await store.ensureIndex(ownerId, name);
  const warnings: string[] = [];
  const skipped: { path: string; reason: string }[] = [];
  // A run that only removes documents extracts nothing: its reports keep the extractor they were made by.
  const previous = (JSON.parse(index.stats || "{}") as { extractor?: string }).extractor;
  const extractor = options.model
    ? `model:${options.model.model.provider}/${options.model.model.id}`
    : documents.length === 0 && previous
      ? previous
      : "offline";
  const removed = await store.tx(async (tx) => {
    const gone: string[] = [];
    for (const title of options.remove ?? []) {
      const doc = await tx.findDocument(index, title);
      if (doc) {
        await tx.deleteDocument(index, doc.id);
        gone.push(title);
      }
    }
    return gone;
  });

  // Units first for every changed document: cheap, and it gives the extraction phase its total.
  const pending: {
    doc: InputDocument;
    hash: string;
    existing?: number;
    units: { text: string; tokens: number }[];
  }[] = [];
  let unchanged = 0;
  for (const [i, doc] of documents.entries()) {
    const reason = rejectReason(doc.text);
    if (reason) {
      warnings.push(`${doc.title}: skipped, ${reason}`);
      skipped.push({ path: doc.title, reason });
    } else {
      const hash = new Bun.CryptoHasher("sha256").update(doc.text).digest("hex");
      const existing = await store.findDocument(index, doc.title);
      if (existing?.content_hash === hash) unchanged++;
      else {
        // A Project Gutenberg licence is not the book: it is left out of units and profile alike.
        const text = withoutLicence(doc.text);
        pending.push({
          doc: { ...doc, text },
          hash,
          existing: existing?.id,
          units: splitUnits(text, options.units ?? DEFAULT_UNITS),
        });
      }
    }
    progress("units", i + 1, documents.length);
  }

  const totalUnits = pending.reduce((sum, p) => sum + p.units.length, 0);
  let extracted = 0;
  progress("extraction", 0, totalUnits);
  for (const item of pending) {
    const extractions: Extraction[] = [];
    // Offline, names are typed from the whole document's evidence before any unit is extracted.
    const profile = options.model ? undefined : profileDocument(item.doc.text);
    for (const unit of item.units) {
      options.signal?.throwIfAborted();
      extractions.push(
        profile
          ? extractOffline(unit.text, profile)
          : await extractWithModel(unit.text, {
              ...(options.model as NonNullable<IndexOptions["model"]>),
              signal: options.signal,
            }),
      );
      progress("extraction", ++extracted, totalUnits);
      // Offline extraction is CPU work: let the server answer other requests between units.
      if (!options.model) await Bun.sleep(0);
    }
    // The document, its units and their extractions land together or not at all.
    await store.tx(async (tx) => {
      if (item.existing !== undefined) await tx.deleteDocument(index, item.existing);
      const rows = await tx.insertDocument(
        index,
        { title: item.doc.title, hash: item.hash, chars: item.doc.text.length },
        item.units,
      );
      for (const [i, row] of rows.entries())
        await tx.insertExtraction(index, row.id, extractions[i] as Extraction);
    });
  }

  const changed = pending.length > 0 || removed.length > 0;
  if (changed) await rebuildGraph(store, graph, index, extractor, options, progress, warnings);
  // Vectors follow the graph; an unchanged graph embeds only what an earlier run could not.
  let vectors: number | undefined;
  if (options.embeddings) {
    const embedded = await embedEntities(store, index, options.embeddings, options.signal);
    vectors = embedded.vectors;
    if (embedded.note) warnings.push(embedded.note);
  }
  const counts = await graph.counts(index);
  const tokens = counts.entities < SMALL_GRAPH ? await store.countTokens(index) : 0;
  if (tokens > 0) warnings.push(smallGraphNote(counts.entities, tokens));
  const stats = JSON.parse(index.stats || "{}") as { levels?: number; modularity?: number[] };
  const fresh = changed
    ? (JSON.parse((await store.findIndex(ownerId, name))?.stats ?? "{}") as typeof stats)
    : stats;
  return {
    index: name,
    documents: await store.countDocuments(index),
    documents_unchanged: unchanged,
    documents_indexed: pending.length,
    ...(options.remove ? { documents_removed: removed.length } : {}),
    units: await store.countUnits(index),
    entities: counts.entities,
    relationships: counts.relationships,
    communities: counts.communities,
    levels: fresh.levels ?? 0,
    modularity: fresh.modularity ?? [],
    reports: counts.reports,
    seconds: Math.round(performance.now() - started) / 1000,
    warnings,
    skipped,
    ...(vectors === undefined ? {} : { vectors }),
  };
}

/** The value `make` gives for `key`, made once per map. */
function memo<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** What a user reads instead of a silent 0 entities: why there is (almost) no graph, and what helps. */
export function smallGraphNote(entities: number, tokens: number): string {
  const found = entities === 0 ? "no entities" : "one entity";
  return (
    `too little to build a graph from: ${found} in ${tokens} tokens of text. Names need a capital letter ` +
    "(two words, or a known place) and two names in one sentence make a relationship; add more text, or " +
    "index with a model (--model) to extract from prose without names"
  );
}

async function rebuildGraph(
  store: SearchStore,
  graph: SearchGraphStore,
  index: IndexRow,
  extractor: string,
  options: IndexOptions,
  progress: (phase: Phase, done: number, total: number) => void,
  warnings: string[],
) {
  const short = (await store.countTokens(index)) < SHORT_INDEX_TOKENS;
  const merged = mergeGraph(
    await store.extractions(index),
    options.model || short ? 1 : OFFLINE_MIN_MENTIONS,
  );
  await writeGraph(store, graph, index, merged, extractor, options, progress, warnings);
}

/**
 * Writes a merged graph and everything derived from it: entities and relationships (with FTS), the
 * community hierarchy, one report per community, and the index's stats. The benchmark loads its
 * synthetic graph through it too.
 */
export async function writeGraph(
  store: SearchStore,
  graph: SearchGraphStore,
  index: IndexRow,
  merged: { entities: MergedEntity[]; relationships: MergedRelationship[] },
  extractor: string,
  options: IndexOptions,
  progress: (phase: Phase, done: number, total: number) => void,
  warnings: string[],
) {
  const ids = await graph.tx((tx) => tx.replaceGraph(index, merged.entities, merged.relationships));
  progress("communities", 0, 1);
  // Communities are found over entities numbered by their place in the merged graph, not by row id: an
  // incremental run keeps the rows it did not change, so row ids no longer follow that order, and
  // Louvain's result depends on the order it meets nodes in (a rebuild must find the same communities).
  const place = new Map(merged.entities.map((e, i) => [e.key, i]));
  const rowIdAt = merged.entities.map((e) => ids.get(e.key) as number);
  const byPlace = await hierarchicalCommunities(
    merged.relationships.map((r) => ({
      source: place.get(r.source) as number,
      target: place.get(r.target) as number,
      weight: r.weight,
    })),
    options.maxClusterSize ?? 10,
  );
  const hierarchy = {
    ...byPlace,
    communities: byPlace.communities.map((c) => ({
      ...c,
      members: c.members.map((m) => rowIdAt[m] as number),
    })),
  };
  progress("communities", 1, 1);

  const entityById = new Map((await graph.allEntities(index)).map((e) => [e.id, e]));
  // Each relationship listed under its source, so a community finds its inner edges without a full scan.
  const bySource = new Map<number, RelationshipRow[]>();
  for (const r of await graph.allRelationships(index)) {
    const list = bySource.get(r.source_id);
    if (list) list.push(r);
    else bySource.set(r.source_id, [r]);
  }
  const previous = await graph.reportsByHash(index);
  const entityText = new Map<number, string>();
  const relationshipText = new Map<number, string>();
  const parents = new Set(hierarchy.communities.map((c) => c.parent).filter((p) => p !== null));
  const list: CommunityToWrite[] = [];
  for (const [i, community] of hierarchy.communities.entries()) {
    const members = new Set(community.members);
    const inner = community.members.flatMap((m) =>
      (bySource.get(m) ?? []).filter((r) => members.has(r.target_id)),
    );
    const input: ReportInput = {
      entities: community.members.map((id) => entityById.get(id)).filter((e) => e !== undefined),
      relationships: inner.sort((x, y) => x.human_id - y.human_id),
    };
    // What the report is made of, by content and citation id (not row id, which every run renews): a
    // community no change touched keeps its report. An entity is in one community per level: its part of
    // the text is made once.
    const hash = new Bun.CryptoHasher("sha256")
      .update(
        `${extractor}|${community.level}|${input.entities.map((e) => memo(entityText, e.human_id, () => `${e.human_id}:${e.name}:${e.type}:${e.degree}:${e.description}`)).join("\n")}|${input.relationships.map((r) => memo(relationshipText, r.human_id, () => `${r.human_id}:${r.weight}:${r.description}`)).join("\n")}`,
      )
      .digest("hex");
    let report = previous.get(hash);
    if (!report && options.model) {
      options.signal?.throwIfAborted();
      report = await modelReport(input, options.model, options.signal);
      if (!report)
        warnings.push(`community ${i}: the model's report did not parse; an extractive report was used`);
    }
    report ??= offlineReport(input);
    list.push({
      level: community.level,
      parent: community.parent,
      members: community.members,
      hash,
      leaf: !parents.has(i),
      report,
      content: reportContent(report),
    });
    progress("reports", i + 1, hierarchy.communities.length);
  }

  const current = new Map([...entityById.values()].map((e) => [e.id, e.community_ids]));
  await store.db.tx(async (q) => {
    await graph.bind(q).replaceCommunities(index, list, current);
    await store.bind(q).saveStats(index, {
      extractor,
      levels: hierarchy.levels,
      modularity: hierarchy.modularity,
    });
  });
}
