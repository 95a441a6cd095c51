/**
 * The search family's index service: builds a caller's named index from uploaded documents (one run per
 * owner and index at a time, on any instance: a second is a 409 while the first runs) and lists the caller's indexes with
 * their counts. It needs only the search store, the model layer, the document reader (HTML is read in
 * its bounded subprocess) and a logger; it never sees Elysia.
 */
import { DEFAULT_INDEX_NAME, type IndexSummary } from "../../../schemas/search.ts";
import { AppError } from "../../http/errors.ts";
import type { Logger } from "../../log.ts";
import type { EmbeddingsClient } from "../../models/embeddings.ts";
import type { ModelService } from "../../models/service.ts";
import type { Leases } from "../../storage/leases.ts";
import { type InputDocument, uploadedDocument } from "../indexing/documents.ts";
import type { IndexOptions } from "../indexing/pipeline.ts";
import type { SearchStore } from "../stores/search-store.ts";
import { SearchVectorStore } from "../stores/vector-store.ts";
import type { IndexRow } from "../types.ts";
import { chooseModel } from "./models.ts";
import type { OwnedReader } from "./uploads.ts";

/**
 * The indexing pipeline (extraction, merging, communities, reports), loaded with the first build rather
 * than at the server's start (docs/benchmarks.md, "Cold start").
 */
const pipeline = () => import("../indexing/pipeline.ts");

/** An indexing request: documents, and optionally the index name and the model to extract with. */
export interface IndexBuildInput {
  name?: string;
  documents: InputDocument[];
  model?: string;
}

/** The lease kind of a running index build: its id is the owner and the index name (a JSON pair). */
export const INDEX_LEASE = "index_build";

export class SearchIndexService {
  /** `owner NUL name` of the runs in progress. */
  private readonly running = new Set<string>();

  constructor(
    private readonly store: SearchStore,
    private readonly models: ModelService,
    private readonly log: Logger,
    private readonly reader: OwnedReader,
    private readonly embeddings?: EmbeddingsClient,
    /** Holds a run among the instances on one database; without it, this process alone is checked. */
    private readonly leases?: Leases,
  ) {}

  /** `onProgress` hears each phase's count as the pipeline works (the streamed build route reports it). */
  async build(
    ownerId: string,
    input: IndexBuildInput,
    signal?: AbortSignal,
    onProgress?: IndexOptions["onProgress"],
  ): Promise<IndexSummary> {
    const name = input.name ?? DEFAULT_INDEX_NAME;
    // Without a model named, indexing stays offline even when a default model is configured.
    const model = input.model ? await chooseModel(this.models, input.model) : undefined;
    return this.exclusive(ownerId, name, async () => {
      // An uploaded document named .html is indexed as the text a reader sees, as a file would be; one
      // that cannot be read within the limits is skipped with the reason.
      const reads = await Promise.all(
        input.documents.map((d) => uploadedDocument(d.title, d.text, this.reader.for(ownerId))),
      );
      const documents = reads.flatMap((r) => ("document" in r ? [r.document] : []));
      const skipped = reads.flatMap((r) => ("skipped" in r ? [r.skipped] : []));
      const built = await (await pipeline()).runIndex(this.store, ownerId, name, documents, {
        model,
        signal,
        embeddings: this.embeddings,
        onProgress,
      });
      const summary = {
        ...built,
        skipped: [...skipped, ...built.skipped],
        warnings: [...skipped.map((s) => `${s.path}: skipped, ${s.reason}`), ...built.warnings],
      };
      this.log.info("search index built", { ...summary, owner: ownerId, warnings: summary.warnings.length });
      return summary;
    });
  }

  /**
   * Takes one document out of an index without a rebuild: its units and extractions go, the graph is
   * re-merged from the rest, and only the communities it touched get new reports.
   */
  async remove(
    ownerId: string,
    indexName: string,
    title: string,
    signal?: AbortSignal,
  ): Promise<IndexSummary> {
    const row = await this.store.findIndex(ownerId, indexName);
    if (!row) throw AppError.notFound(`No index '${indexName}'`);
    if (!(await this.store.findDocument(row, title)))
      throw AppError.notFound(`Index '${indexName}' has no document '${title}'`);
    return this.exclusive(ownerId, indexName, async () => {
      const summary = await (await pipeline()).runIndex(this.store, ownerId, indexName, [], {
        remove: [title],
        signal,
        embeddings: this.embeddings,
      });
      this.log.info("search document removed", {
        index: indexName,
        owner: ownerId,
        documents: summary.documents,
      });
      return summary;
    });
  }

  async documents(ownerId: string, indexName: string) {
    const row = await this.store.findIndex(ownerId, indexName);
    if (!row) throw AppError.notFound(`No index '${indexName}'`);
    return this.store.listDocuments(row);
  }

  /**
   * One run per owner and index at a time: a second is a 409 while the first runs, here or on another
   * instance (the lease row). A run whose instance crashed stops blocking once its lease lapses.
   */
  private async exclusive<T>(ownerId: string, name: string, run: () => Promise<T>): Promise<T> {
    const key = `${ownerId}\u0000${name}`;
    const busy = () =>
      new AppError("conflict", `Index '${name}' is being built; try again when that run ends`);
    if (this.running.has(key)) throw busy();
    this.running.add(key);
    // PostgreSQL text holds no NUL: the lease names the pair as JSON.
    const leaseId = JSON.stringify([ownerId, name]);
    try {
      if (this.leases && !(await this.leases.take(INDEX_LEASE, leaseId))) throw busy();
      try {
        return await run();
      } finally {
        await this.leases
          ?.release(INDEX_LEASE, leaseId)
          .catch((error) => this.log.warn("an index build lease was not released", { error }));
      }
    } finally {
      this.running.delete(key);
    }
  }

  async list(ownerId: string) {
    const rows = await this.store.listIndexes(ownerId);
    const list = [];
    for (const row of rows)
      list.push({
        name: row.name,
        documents: await this.store.countDocuments(row),
        units: await this.store.countUnits(row),
        stats: JSON.parse(row.stats) as Record<string, unknown>,
        updated_at: row.updated_at,
        ...(this.embeddings ? { vectors: await this.vectorState(row, this.embeddings.model) } : {}),
      });
    return list;
  }

  /** How far an index's entities are embedded, and why search stays on BM25 when it does. */
  private async vectorState(row: IndexRow, model: string) {
    const vectors = new SearchVectorStore(this.store.db, this.store.sqlite);
    const ready = await vectors.available();
    if (!ready.ok) return { model, entities: 0, note: `${ready.reason}; local search stays on BM25` };
    const entities = await vectors.count(row, model);
    return entities > 0
      ? { model, entities }
      : {
          model,
          entities,
          note: "no entity has a vector yet (re-index to embed); local search stays on BM25",
        };
  }
}
