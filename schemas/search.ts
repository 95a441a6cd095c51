/**
 * Schemas of the search family (graph search spec, area A): the search query, responses, follow-up
 * questions, and the indexing extension. Schemas only: no runtime code.
 */
import { t } from "elysia";
import { Integer } from "./common.ts";

/** A query longer than this is refused with 422: it would only dilute BM25 and blow the token budget. */
export const MAX_QUERY_CHARS = 8000;
export const INDEX_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
/** The index a request or the `index` command uses when it names none. */
export const DEFAULT_INDEX_NAME = "default";

/** Validates index names on the routes and the `index` command's `--name` alike. */
export const IndexName = t.String({
  pattern: INDEX_NAME_PATTERN,
  description: "a named index of the caller (default `default`)",
  examples: [DEFAULT_INDEX_NAME],
});

const ModelId = t.String({
  minLength: 1,
  maxLength: 200,
  description:
    "provider/model to answer with; default: the configured default model, else offline (extractive)",
});

export const SearchQuery = t.Object(
  {
    query: t.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, examples: ["Who was Marley?"] }),
    index: t.Optional(IndexName),
    community_level: t.Optional(
      Integer({
        minimum: 0,
        maximum: 16,
        description: "global search: community level to map over (default 2, capped at the deepest level)",
      }),
    ),
    model: t.Optional(ModelId),
  },
  {
    description:
      "SearchQuery: `query` is required; `index`, `community_level` and `model` are Atrium extensions",
    // The index docs/search.md's "Try it" builds from docs/demo-corpus/, so Swagger's example answers.
    examples: [{ query: "Who was Marley?", index: "carol" }],
  },
);
/** A validated search request, as the query service takes it. */
export type SearchQuery = typeof SearchQuery.static;

const Record = t.Record(t.String(), t.Any());

export const SearchResponse = t.Object({
  response: t.String(),
  context_data: t.Record(t.String(), t.Array(Record), {
    description:
      "context tables as lists of records, each with `in_context`: local search `reports`, `entities`, `relationships`, `claims`, `sources`; global search `reports` and `points`",
  }),
});

export const QuestionsResponse = t.Object({
  questions: t.Array(t.String(), {
    description: "up to 5 follow-up questions grounded in the graph around the query",
  }),
});

export const IndexRequest = t.Object({
  name: t.Optional(IndexName),
  documents: t.Array(
    t.Object({
      name: t.String({
        minLength: 1,
        maxLength: 255,
        description: "document title; re-sending the same name replaces or keeps it",
      }),
      text: t.String({ description: "plain text or Markdown" }),
    }),
    { minItems: 1, maxItems: 200 },
  ),
  model: t.Optional(ModelId),
});

export const IndexUpload = t.Object({
  name: t.Optional(IndexName),
  model: t.Optional(ModelId),
  files: t.Files({
    minItems: 1,
    maxItems: 200,
    description:
      "the files (repeat the field): .pdf, .html/.htm, .md, .txt; other types are listed as skipped in the summary",
  }),
});

export const IndexSummary = t.Object({
  index: t.String(),
  documents: Integer(),
  documents_unchanged: Integer(),
  documents_indexed: Integer(),
  documents_removed: t.Optional(Integer({ description: "documents taken out by this run (a removal)" })),
  units: Integer(),
  entities: Integer(),
  relationships: Integer(),
  communities: Integer(),
  levels: Integer(),
  modularity: t.Array(t.Number(), { description: "modularity of the partition at each community level" }),
  reports: Integer(),
  seconds: t.Number(),
  warnings: t.Array(t.String(), {
    description: "documents skipped (binary, not UTF-8, empty) and other notes",
  }),
  skipped: t.Array(t.Object({ path: t.String(), reason: t.String() }), {
    description:
      "every document or file not indexed and why: unsupported type, .atriumignore or --exclude, hidden, binary, empty, a PDF without text",
  }),
  vectors: t.Optional(
    Integer({
      description:
        "entities with an embedding vector, when the policy names an embeddings endpoint (absent otherwise)",
    }),
  ),
});
/** What an indexing run did: the pipeline's result, the route's answer and the command's summary. */
export type IndexSummary = typeof IndexSummary.static;

export const IndexList = t.Object({
  indexes: t.Array(
    t.Object({
      name: t.String(),
      documents: Integer(),
      units: Integer(),
      stats: Record,
      updated_at: t.String(),
      vectors: t.Optional(
        t.Object(
          {
            model: t.String(),
            entities: Integer({ description: "entities with a vector of this model" }),
            note: t.Optional(t.String({ description: "why local search stays on BM25, when it does" })),
          },
          { description: "present when the policy names an embeddings endpoint" },
        ),
      ),
    }),
  ),
});

/** `/search/indexes/{index}/documents`: one of the caller's indexes. */
export const IndexParams = t.Object({ index: IndexName });

/** `/search/indexes/{index}/documents/{name}`: the index and one of its documents, by title. */
export const IndexDocumentParams = t.Object({
  index: IndexName,
  name: t.String({ minLength: 1, maxLength: 255, description: "the document's title (URL-encoded)" }),
});

export const DocumentList = t.Object({
  documents: t.Array(
    t.Object({
      name: t.String({ description: "the title it was indexed under" }),
      chars: Integer(),
      units: Integer(),
      indexed_at: t.String(),
    }),
  ),
});

/** The most entities `GET /search/indexes/{index}/graph` sends (the most connected first). */
export const MAX_GRAPH_ENTITIES = 20000;
/** Entities it sends when the request names no limit. */
export const DEFAULT_GRAPH_ENTITIES = 10000;

export const GraphQuery = t.Object({
  limit: t.Optional(
    t.Numeric({
      minimum: 1,
      maximum: MAX_GRAPH_ENTITIES,
      multipleOf: 1,
      description: `most entities to send, the most connected first (default ${DEFAULT_GRAPH_ENTITIES})`,
    }),
  ),
});

/**
 * The graph as columns (one array per field, position i is entity i), so 10,000 entities stay a few
 * hundred KB of JSON; positions are computed on the server, so the browser only draws.
 */
export const IndexGraph = t.Object({
  index: t.String(),
  entities: Integer({ description: "entities in the index" }),
  relationships: Integer({ description: "relationships in the index" }),
  note: t.Optional(
    t.String({ description: "what was left out when the graph is larger than the limit, and why" }),
  ),
  nodes: t.Object(
    {
      id: t.Array(Integer(), { description: "citation ids ([Data: Entities (id)])" }),
      name: t.Array(t.String()),
      type: t.Array(t.String()),
      degree: t.Array(Integer()),
      community: t.Array(Integer(), {
        description: "the coarsest (level 0) community's id, -1 for an entity in none",
      }),
      x: t.Array(t.Number()),
      y: t.Array(t.Number()),
    },
    { description: "the entities sent, most connected first, laid out by community (circle packing)" },
  ),
  edges: t.Object(
    {
      source: t.Array(Integer(), { description: "position in `nodes`" }),
      target: t.Array(Integer(), { description: "position in `nodes`" }),
      weight: t.Array(t.Number()),
    },
    { description: "the relationships between entities sent, heaviest first" },
  ),
});

/** `/search/indexes/{index}/graph/entities/{id}`: one entity by citation id. */
export const GraphEntityParams = t.Object({
  index: IndexName,
  id: t.Numeric({ minimum: 0, maximum: 2 ** 31, multipleOf: 1, description: "the entity's citation id" }),
});

export const GraphEntity = t.Object({
  id: Integer(),
  name: t.String(),
  type: t.String(),
  description: t.String(),
  degree: Integer(),
  mentions: Integer(),
  sources: t.Array(
    t.Object({
      id: Integer({ description: "the text unit ([Data: Sources (id)])" }),
      document: t.String(),
      text: t.String({ description: "the passage that mentions it, clipped at whole words" }),
    }),
    { description: "up to 5 text units that mention the entity" },
  ),
  related: t.Array(t.Object({ id: Integer(), name: t.String(), weight: t.Number() }), {
    description: "up to 10 neighbours, by relationship weight",
  }),
});

/** `/monitor-debug` never answers 200; the reference client's document listed one of unspecified schema. */
export const MonitorDebugOk = t.Object(
  {},
  {
    description:
      "never sent: the route always fails with a logged 500 (the reference client listed a 200 of unspecified schema)",
  },
);
