/**
 * The search family's service: resolves the caller's index and model, then runs indexing and the query
 * engines. Plain class; never sees Elysia. A missing index is a normal answer (200, saying so), not an error.
 */

import { AppError } from "../http/errors.ts";
import { programName } from "../lib/program.ts";
import type { Logger } from "../log.ts";
import { OFFLINE_MODEL_ID } from "../models/ids.ts";
import { type ModelService, UnknownModelError } from "../models/service.ts";
import type { Store } from "../storage/store.ts";
import { GraphStore } from "./graph-store.ts";
import type { InputDocument } from "./index/documents.ts";
import { runIndex } from "./index/pipeline.ts";
import { type Answer, fixedAnswer, type ModelChoice } from "./query/answer.ts";
import { globalSearch } from "./query/global.ts";
import { localSearch } from "./query/local.ts";
import { emptyTables } from "./query/local-context.ts";
import { generateQuestions } from "./query/questions.ts";
import { SearchStore } from "./store.ts";
import type { IndexRow, IndexSummary } from "./types.ts";

export const DEFAULT_INDEX = "default";

export interface QueryInput {
  query: string;
  index?: string;
  community_level?: number;
  model?: string;
}

export class SearchService {
  readonly search: SearchStore;
  readonly graph: GraphStore;
  private readonly running = new Set<string>();

  constructor(
    store: Store,
    private readonly models: ModelService,
    private readonly log: Logger,
  ) {
    this.search = new SearchStore(store);
    this.graph = new GraphStore(store);
  }

  local(ownerId: string, input: QueryInput): Answer {
    const index = this.indexOf(ownerId, input);
    if (!index) return this.noIndex(input);
    return localSearch(this, index, input.query, this.modelFor(input.model));
  }

  async global(ownerId: string, input: QueryInput, signal?: AbortSignal): Promise<Answer> {
    const index = this.indexOf(ownerId, input);
    if (!index) return this.noIndex(input);
    return globalSearch(
      this.graph,
      index,
      input.query,
      this.modelFor(input.model),
      { level: input.community_level },
      signal,
    );
  }

  async questions(ownerId: string, input: QueryInput, signal?: AbortSignal): Promise<string[]> {
    const index = this.indexOf(ownerId, input);
    if (!index) return [];
    return generateQuestions(this, index, input.query, this.modelFor(input.model), signal);
  }

  async index(
    ownerId: string,
    name: string,
    documents: InputDocument[],
    modelId?: string,
    signal?: AbortSignal,
  ): Promise<IndexSummary> {
    const key = `${ownerId}\u0000${name}`;
    if (this.running.has(key))
      throw new AppError("conflict", `Index '${name}' is being built; try again when that run ends`);
    const model = modelId ? this.modelFor(modelId) : undefined;
    this.running.add(key);
    try {
      const summary = await runIndex(this.search, ownerId, name, documents, { model, signal });
      this.log.info("search index built", { ...summary, owner: ownerId, warnings: summary.warnings.length });
      return summary;
    } finally {
      this.running.delete(key);
    }
  }

  indexes(ownerId: string) {
    return this.search.listIndexes(ownerId).map((row) => ({
      name: row.name,
      documents: this.search.countDocuments(row),
      units: this.search.countUnits(row),
      stats: JSON.parse(row.stats) as Record<string, unknown>,
      updated_at: row.updated_at,
    }));
  }

  private indexOf(ownerId: string, input: QueryInput): IndexRow | undefined {
    const row = this.search.findIndex(ownerId, input.index ?? DEFAULT_INDEX);
    return row && this.search.countUnits(row) > 0 ? row : undefined;
  }

  private noIndex(input: QueryInput): Answer {
    const name = input.index ?? DEFAULT_INDEX;
    return fixedAnswer(
      emptyTables() as unknown as Answer["context_data"],
      `No search index named '${name}' has been built yet, so there is nothing to search. Build one with \`${programName()} index <files or directories> --name ${name}\` or POST /search/index.`,
    );
  }

  /** The model to answer with: the one asked for, else the configured default; undefined means offline. */
  private modelFor(requested?: string): ModelChoice | undefined {
    const id = requested ?? this.models.defaultModel().id;
    if (id === "offline" || id === OFFLINE_MODEL_ID) return undefined;
    try {
      return { models: this.models, model: this.models.resolve(id) };
    } catch (error) {
      if (!(error instanceof UnknownModelError)) throw error;
      throw new AppError("invalid", error.message, {
        issues: [{ loc: ["body", "model"], msg: error.message, type: "value_error" }],
      });
    }
  }
}
