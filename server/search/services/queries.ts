/**
 * The search family's query service: local search, global search and follow-up questions over the
 * caller's named index, answered by the chosen model or offline. It needs only the two stores and the
 * model layer; it never sees Elysia. A missing (or empty) index is a normal answer (200, saying so).
 * The answerers (local, global, follow-up questions) load with the first question that needs them, not
 * at the server's start (docs/benchmarks.md, "Cold start").
 */
import { DEFAULT_INDEX_NAME, type SearchQuery } from "../../../schemas/search.ts";
import { programName } from "../../lib/program.ts";
import { type EmbeddingsClient, EmbeddingsError } from "../../models/embeddings.ts";
import type { ModelService } from "../../models/service.ts";
import { SearchVectorStore } from "../stores/vector-store.ts";
import type { IndexRow } from "../types.ts";
import { type Answer, fixedAnswer } from "./answer.ts";
import { unitCount } from "./index-stats.ts";
import type { SearchStores } from "./local-context.ts";
import { chooseModel } from "./models.ts";

/** Entities the vector ranking contributes to the blend. */
const NEAREST = 10;

export class SearchQueryService {
  private readonly vectors: SearchVectorStore;

  constructor(
    private readonly stores: SearchStores,
    private readonly models: ModelService,
    private readonly embeddings?: EmbeddingsClient,
  ) {
    this.vectors = new SearchVectorStore(stores.search.db, stores.search.sqlite);
  }

  async local(ownerId: string, input: SearchQuery, signal?: AbortSignal): Promise<Answer> {
    const index = await this.indexOf(ownerId, input);
    if (!index) return noIndexAnswer(input);
    const { localSearch } = await import("./local.ts");
    const model = await chooseModel(this.models, input.model);
    const vectorRanked = await this.nearestEntities(index, input.query, signal);
    return localSearch(this.stores, index, input.query, model, { vectorRanked });
  }

  /**
   * Entities nearest to the query by embedding, when the policy names an embeddings endpoint, sqlite-vec
   * loads and the index has vectors of that model; otherwise undefined (BM25 alone). An endpoint failing
   * at query time falls back to BM25 rather than failing the search.
   */
  private async nearestEntities(index: IndexRow, query: string, signal?: AbortSignal) {
    const client = this.embeddings;
    if (!client || !(await this.vectors.available()).ok || !(await this.vectors.has(index, client.model)))
      return undefined;
    try {
      const [vector] = await client.embed([query], signal);
      return vector ? this.vectors.nearest(index, client.model, vector, NEAREST) : undefined;
    } catch (error) {
      if (error instanceof EmbeddingsError) return undefined;
      throw error;
    }
  }

  async global(ownerId: string, input: SearchQuery, signal?: AbortSignal): Promise<Answer> {
    const index = await this.indexOf(ownerId, input);
    if (!index) return noIndexAnswer(input);
    const { globalSearch } = await import("./global.ts");
    return globalSearch(
      this.stores,
      index,
      input.query,
      await chooseModel(this.models, input.model),
      { level: input.community_level },
      signal,
    );
  }

  async questions(ownerId: string, input: SearchQuery, signal?: AbortSignal): Promise<string[]> {
    const index = await this.indexOf(ownerId, input);
    if (!index) return [];
    const { generateQuestions } = await import("./questions.ts");
    return generateQuestions(
      this.stores,
      index,
      input.query,
      await chooseModel(this.models, input.model),
      signal,
    );
  }

  /** The named index when it holds text to search; an index with no units counts as missing. */
  private async indexOf(ownerId: string, input: SearchQuery): Promise<IndexRow | undefined> {
    const row = await this.stores.search.findIndex(ownerId, input.index ?? DEFAULT_INDEX_NAME);
    return row && (await unitCount(this.stores.search, row)) > 0 ? row : undefined;
  }
}

async function noIndexAnswer(input: SearchQuery): Promise<Answer> {
  const { emptyTables } = await import("./local-context.ts");
  const name = input.index ?? DEFAULT_INDEX_NAME;
  return fixedAnswer(
    emptyTables() as unknown as Answer["context_data"],
    `No search index named '${name}' has been built yet, so there is nothing to search. Build one with \`${programName()} index <files or directories> --name ${name}\` or POST /search/index.`,
  );
}
