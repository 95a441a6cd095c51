/**
 * Agents and fleets: creation, reads, updates and deletes with the rules the store cannot express
 * (a model id must resolve, fleet members must exist and be the caller's, a lead must be a member, an
 * agent a fleet uses cannot be deleted). Plain functions of (owner, input); never sees Elysia.
 */
import type { Capability, FleetType, Pattern, RecordStatus } from "../../schemas/agents.ts";
import { AppError } from "../http/errors.ts";
import type { Page } from "../http/paging.ts";
import type { Issue } from "../http/validation.ts";
import { isoNow } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import type { ModelService } from "../models/service.ts";
import type { AgentRecord, AgentStore, FleetRecord } from "./store.ts";

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

export interface FleetInput {
  name?: string;
  description?: string;
  type?: FleetType;
  agent_ids?: string[];
  coordination_pattern?: Pattern;
  config?: Record<string, unknown>;
  status?: RecordStatus;
}

export const invalid = (issues: Issue[]) =>
  new AppError("invalid", `Invalid request: ${issues[0]?.loc.join(".")}: ${issues[0]?.msg}`, { issues });

export class AgentService {
  constructor(
    private readonly agents: AgentStore,
    private readonly models: ModelService,
  ) {}

  /** The model a message to this agent uses now: its own, else the server default. */
  effectiveModel(agent: { model: string | null }): string {
    return agent.model ?? this.models.defaultModel().id;
  }

  view(agent: AgentRecord) {
    return { ...agent, effective_model: this.effectiveModel(agent) };
  }

  private checkModel(model: string | null | undefined): void {
    if (model === undefined || model === null) return;
    try {
      this.models.resolve(model);
    } catch (error) {
      throw invalid([{ loc: ["body", "model"], msg: (error as Error).message, type: "value_error" }]);
    }
  }

  createAgent(owner: string, input: AgentInput): AgentRecord {
    this.checkModel(input.model);
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
    this.agents.insertAgent(owner, agent);
    return agent;
  }

  getAgent(owner: string, id: string): AgentRecord {
    const agent = this.agents.getAgent(owner, id);
    if (!agent) throw AppError.notFound(`Agent ${id} not found`);
    return agent;
  }

  listAgents(owner: string, filter: Page & { status?: string }) {
    return this.agents.listAgents(owner, filter);
  }

  updateAgent(owner: string, id: string, input: AgentInput): AgentRecord {
    const agent = this.getAgent(owner, id);
    this.checkModel(input.model);
    const updated: AgentRecord = {
      ...agent,
      ...definedOnly(input),
      model: input.model === undefined ? agent.model : input.model,
      updated_at: isoNow(),
    };
    this.agents.updateAgent(owner, updated);
    return updated;
  }

  /** Refused with 409 while a fleet lists the agent; the agent's own memory goes with it. */
  deleteAgent(owner: string, id: string): void {
    this.getAgent(owner, id);
    const fleets = this.agents.fleetsUsingAgent(owner, id);
    if (fleets.length > 0) {
      const names = fleets.map((f) => `${f.name} (${f.id})`).join(", ");
      throw new AppError(
        "conflict",
        `Agent ${id} is a member of ${fleets.length === 1 ? "fleet" : "fleets"} ${names}; remove it from them first`,
      );
    }
    this.agents.deleteAgent(owner, id);
  }

  private checkFleet(owner: string, fleet: FleetRecord): void {
    const found = this.agents.agentsByIds(owner, fleet.agent_ids);
    const issues: Issue[] = [];
    fleet.agent_ids.forEach((agentId, index) => {
      if (!found.has(agentId))
        issues.push({
          loc: ["body", "agent_ids", index],
          msg: `Agent ${agentId} does not exist`,
          type: "value_error",
        });
    });
    const lead = fleet.config.lead_agent_id;
    if (lead !== undefined && !fleet.agent_ids.includes(String(lead)))
      issues.push({
        loc: ["body", "config", "lead_agent_id"],
        msg: "The lead agent must be one of agent_ids",
        type: "value_error",
      });
    if (issues.length) throw invalid(issues);
  }

  createFleet(owner: string, input: FleetInput): FleetRecord {
    const now = isoNow();
    const fleet: FleetRecord = {
      id: newId("fleet", "uuid"),
      name: input.name ?? "",
      description: input.description ?? "",
      type: input.type ?? "CUSTOM",
      agent_ids: input.agent_ids ?? [],
      coordination_pattern: input.coordination_pattern ?? "sequential",
      config: input.config ?? {},
      status: input.status ?? "active",
      created_at: now,
      updated_at: now,
    };
    this.checkFleet(owner, fleet);
    this.agents.insertFleet(owner, fleet);
    return fleet;
  }

  getFleet(owner: string, id: string): FleetRecord {
    const fleet = this.agents.getFleet(owner, id);
    if (!fleet) throw AppError.notFound(`Fleet ${id} not found`);
    return fleet;
  }

  listFleets(owner: string, filter: Page & { type?: string; status?: string }) {
    return this.agents.listFleets(owner, filter);
  }

  updateFleet(owner: string, id: string, input: FleetInput): FleetRecord {
    const fleet = this.getFleet(owner, id);
    const updated: FleetRecord = { ...fleet, ...definedOnly(input), updated_at: isoNow() };
    this.checkFleet(owner, updated);
    this.agents.updateFleet(owner, updated);
    return updated;
  }

  /** A fleet's memory goes with it; its agents stay. */
  deleteFleet(owner: string, id: string): void {
    this.getFleet(owner, id);
    this.agents.deleteFleet(owner, id);
  }

  /** The fleet's members in order, skipping inactive ones. */
  activeMembers(owner: string, fleet: FleetRecord): AgentRecord[] {
    const found = this.agents.agentsByIds(owner, fleet.agent_ids);
    return fleet.agent_ids.flatMap((id) => {
      const agent = found.get(id);
      return agent && agent.status === "active" ? [agent] : [];
    });
  }
}

function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
