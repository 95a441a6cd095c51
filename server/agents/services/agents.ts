/**
 * Agents: creation, reads, updates and deletes with the rules the store cannot express (a model id must
 * resolve, an agent a fleet uses cannot be deleted). Answers in the API's shape (with
 * `effective_model`). Plain methods of (owner, input); never sees Elysia.
 */
import type { Capability, RecordStatus } from "../../../schemas/agents.ts";
import { AppError, invalidRequest } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import { isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { ModelService } from "../../models/service.ts";
import { effectiveModel } from "../runtime/agent-call.ts";
import type { AgentRecord, AgentStore } from "../stores/agents.ts";
import type { FleetStore } from "../stores/fleets.ts";
import { pageInfo } from "./paging.ts";
import { definedOnly } from "./partial.ts";

export interface AgentInput {
  name?: string;
  role?: string;
  description?: string;
  capabilities?: Capability[];
  model?: string | null;
  instructions?: string;
  config?: Record<string, unknown>;
  status?: RecordStatus;
}

export interface AgentServiceDeps {
  agents: AgentStore;
  fleets: Pick<FleetStore, "withMember">;
  models: Pick<ModelService, "resolve" | "fallbackModel">;
}

export class AgentService {
  constructor(private readonly deps: AgentServiceDeps) {}

  private view(agent: AgentRecord) {
    return { ...agent, effective_model: effectiveModel(agent, this.deps.models) };
  }

  private async checkModel(model: string | null | undefined): Promise<void> {
    if (model === undefined || model === null) return;
    try {
      await this.deps.models.resolve(model);
    } catch (error) {
      throw invalidRequest([{ loc: ["body", "model"], msg: (error as Error).message, type: "value_error" }]);
    }
  }

  private async record(owner: string, id: string): Promise<AgentRecord> {
    const agent = await this.deps.agents.get(owner, id);
    if (!agent) throw AppError.notFound(`Agent ${id} not found`);
    return agent;
  }

  async create(owner: string, input: AgentInput) {
    await this.checkModel(input.model);
    const now = isoNow();
    const agent: AgentRecord = {
      id: newId("agent", "uuid"),
      name: input.name ?? "",
      role: input.role ?? "",
      description: input.description ?? "",
      capabilities: input.capabilities ?? [],
      model: input.model ?? null,
      instructions: input.instructions ?? "",
      config: input.config ?? {},
      status: input.status ?? "active",
      created_at: now,
      updated_at: now,
    };
    await this.deps.agents.insert(owner, agent);
    return this.view(agent);
  }

  async get(owner: string, id: string) {
    return this.view(await this.record(owner, id));
  }

  async list(owner: string, filter: Page & { status?: string }) {
    const { items, total } = await this.deps.agents.list(owner, filter);
    return { agents: items.map((a) => this.view(a)), ...pageInfo(filter, items.length, total) };
  }

  async update(owner: string, id: string, input: AgentInput) {
    const agent = await this.record(owner, id);
    await this.checkModel(input.model);
    const updated: AgentRecord = {
      ...agent,
      ...definedOnly(input),
      model: input.model === undefined ? agent.model : input.model,
      updated_at: isoNow(),
    };
    await this.deps.agents.update(owner, updated);
    return this.view(updated);
  }

  /** Refused with 409 while a fleet lists the agent; the agent's own memory goes with it. */
  async delete(owner: string, id: string): Promise<void> {
    await this.record(owner, id);
    const fleets = await this.deps.fleets.withMember(owner, id);
    if (fleets.length > 0) {
      const names = fleets.map((f) => `${f.name} (${f.id})`).join(", ");
      throw new AppError(
        "conflict",
        `Agent ${id} is a member of ${fleets.length === 1 ? "fleet" : "fleets"} ${names}; remove it from them first`,
      );
    }
    await this.deps.agents.delete(owner, id);
  }
}
