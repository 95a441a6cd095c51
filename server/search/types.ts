/**
 * Domain records of the search family, shared by the indexing pipeline, the stores and the query services.
 * (What an indexing run reports, `IndexSummary`, is the schema's type in schemas/search.ts.)
 */

export type EntityType = "person" | "geo" | "organization" | "event";
export const ENTITY_TYPES: EntityType[] = ["organization", "person", "geo", "event"];

/** One entity as an extractor saw it in one text unit. */
export interface ExtractedEntity {
  name: string;
  type: string;
  description: string;
  /** Sentences of the unit that mention it (offline extractor); 1 when not counted. */
  mentions?: number;
}

/** One relationship as an extractor saw it in one text unit; weight is its strength there. */
export interface ExtractedRelationship {
  source: string;
  target: string;
  description: string;
  weight: number;
}

export interface Extraction {
  entities: ExtractedEntity[];
  relationships: ExtractedRelationship[];
}

export interface UnitRow {
  id: number;
  document_id: number;
  ordinal: number;
  text: string;
  tokens: number;
}

export interface EntityRow {
  id: number;
  human_id: number;
  name: string;
  type: string;
  description: string;
  degree: number;
  mentions: number;
  unit_ids: string;
  community_ids: string;
}

export interface RelationshipRow {
  id: number;
  human_id: number;
  source_id: number;
  target_id: number;
  source: string;
  target: string;
  description: string;
  weight: number;
  rank: number;
  unit_ids: string;
}

export interface Finding {
  summary: string;
  explanation: string;
}

/** GraphRAG's community report shape. */
export interface Report {
  title: string;
  summary: string;
  rating: number;
  rating_explanation: string;
  findings: Finding[];
}

export interface ReportRow {
  id: number;
  community_id: number;
  human_id: number;
  level: number;
  title: string;
  summary: string;
  rating: number;
  rating_explanation: string;
  findings: string;
  content: string;
}

export interface IndexRow {
  id: number;
  owner_id: string;
  name: string;
  stats: string;
  created_at: string;
  updated_at: string;
}

/** One stored extraction row: an entity or a relationship one text unit yielded. */
export interface ExtractionRecord {
  unit_id: number;
  kind: "entity" | "relationship";
  name: string;
  target: string | null;
  type: string | null;
  description: string;
  weight: number;
}

/** One entity of the merged graph; `key` is its name key, `unitIds` the units that mention it. */
export interface MergedEntity {
  key: string;
  name: string;
  type: string;
  description: string;
  mentions: number;
  unitIds: number[];
  degree: number;
}

/** One undirected relationship of the merged graph, between two entity keys. */
export interface MergedRelationship {
  source: string;
  target: string;
  description: string;
  weight: number;
  unitIds: number[];
  rank: number;
}

/** Whether entity vectors can be stored and searched here (sqlite-vec or pgvector), else why not. */
export type VectorSupport = { ok: true } | { ok: false; reason: string };
