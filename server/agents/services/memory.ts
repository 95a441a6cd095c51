/**
 * Memory entries of agents and fleets: CRUD with the holder checked (it must exist and be the caller's),
 * search (holder, type, all-of tags, BM25 full text, pagination), and recall: the entries put into an
 * agent's context for a chat message. Answers in the API's shape (the holder is `owner_id`/`owner_type`).
 */
import type { MemoryType } from "../../../schemas/agents.ts";
import { AppError, invalidRequest } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import { isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { AgentStore } from "../stores/agents.ts";
import type { FleetStore } from "../stores/fleets.ts";
import { type MemoryRecord, type MemoryStore, matchExpression } from "../stores/memory.ts";
import { pageInfo } from "./paging.ts";

export interface MemoryInput {
  owner_id?: string;
  owner_type?: "agent" | "fleet";
  type?: MemoryType;
  content?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  importance?: number;
}

export interface MemorySearch extends Page {
  owner_id?: string;
  owner_type?: string;
  type?: string;
  tags?: string[] | string;
  content_query?: string;
}

export interface MemoryServiceDeps {
  memory: MemoryStore;
  agents: Pick<AgentStore, "get">;
  fleets: Pick<FleetStore, "get">;
}

/** The API speaks of the memory's owner (agent or fleet); the store calls it the holder. */
function memoryView<T extends MemoryRecord>(entry: T) {
  const { holder_id, holder_type, ...rest } = entry;
  return { ...rest, owner_id: holder_id, owner_type: holder_type };
}

export function parseTags(tags: string[] | string | undefined): string[] {
  const list = typeof tags === "string" ? [tags] : (tags ?? []);
  return [
    ...new Set(
      list
        .flatMap((t) => t.split(","))
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

export class MemoryService {
  constructor(private readonly deps: MemoryServiceDeps) {}

  private async checkHolder(owner: string, id: string, type: string): Promise<void> {
    const exists =
      type === "agent" ? await this.deps.agents.get(owner, id) : await this.deps.fleets.get(owner, id);
    if (!exists)
      throw invalidRequest([
        {
          loc: ["body", "owner_id"],
          msg: `${type === "agent" ? "Agent" : "Fleet"} ${id} does not exist`,
          type: "value_error",
        },
      ]);
  }

  async create(
    owner: string,
    input: Required<Pick<MemoryInput, "owner_id" | "owner_type" | "type" | "content">> & MemoryInput,
  ) {
    await this.checkHolder(owner, input.owner_id, input.owner_type);
    const now = isoNow();
    const entry: MemoryRecord = {
      id: newId("mem", "uuid"),
      holder_id: input.owner_id,
      holder_type: input.owner_type,
      type: input.type,
      content: input.content,
      tags: input.tags ?? [],
      metadata: input.metadata ?? {},
      importance: input.importance ?? 0.5,
      created_at: now,
      updated_at: now,
    };
    await this.deps.memory.insert(owner, entry);
    return memoryView(entry);
  }

  private async record(owner: string, id: string): Promise<MemoryRecord> {
    const entry = await this.deps.memory.get(owner, id);
    if (!entry) throw AppError.notFound(`Memory entry ${id} not found`);
    return entry;
  }

  async get(owner: string, id: string) {
    return memoryView(await this.record(owner, id));
  }

  async update(owner: string, id: string, input: MemoryInput) {
    const entry = await this.record(owner, id);
    const updated: MemoryRecord = {
      ...entry,
      type: input.type ?? entry.type,
      content: input.content ?? entry.content,
      tags: input.tags ?? entry.tags,
      metadata: input.metadata ?? entry.metadata,
      importance: input.importance ?? entry.importance,
      updated_at: isoNow(),
    };
    await this.deps.memory.update(owner, updated);
    return memoryView(updated);
  }

  async delete(owner: string, id: string): Promise<void> {
    if (!(await this.deps.memory.delete(owner, id))) throw AppError.notFound(`Memory entry ${id} not found`);
  }

  async search(owner: string, query: MemorySearch) {
    let match: string | undefined;
    if (query.content_query !== undefined) {
      match = matchExpression(query.content_query);
      if (!match)
        throw invalidRequest([
          {
            loc: ["query", "content_query"],
            msg: "content_query has no searchable words",
            type: "value_error",
          },
        ]);
    }
    const { items, total } = await this.deps.memory.search(owner, {
      holderId: query.owner_id,
      holderType: query.owner_type,
      type: query.type,
      tags: parseTags(query.tags),
      match,
      limit: query.limit,
      offset: query.offset,
    });
    return { results: items.map((item) => memoryView(item)), ...pageInfo(query, items.length, total) };
  }

  /**
   * What an agent remembers for a message: the entries of the agent (and of its fleet, if any) that
   * match the message's words, best BM25 first; when none match, its most important entries.
   */
  async recall(
    owner: string,
    holders: { id: string; type: string }[],
    message: string,
    limit: number,
  ): Promise<MemoryRecord[]> {
    if (limit <= 0) return [];
    const match = matchExpression(message);
    const base = { holders, limit, offset: 0 };
    // No totals: the context needs the entries, not how many there are.
    const hits = match
      ? (await this.deps.memory.search(owner, { ...base, match }, { count: false })).items
      : [];
    const found = hits.length ? hits : (await this.deps.memory.search(owner, base, { count: false })).items;
    return found.map(({ score: _score, ...entry }) => entry);
  }
}
