/**
 * Fleets: creation, reads, updates and deletes with the rules the store cannot express (every member
 * must exist and be the caller's, a lead must be a member). Plain methods of (owner, input); never sees
 * Elysia.
 */
import type { FleetType, Pattern, RecordStatus } from "../../../schemas/agents.ts";
import { AppError, invalidRequest } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import type { Issue } from "../../http/validation.ts";
import { isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { AgentStore } from "../stores/agents.ts";
import type { FleetRecord, FleetStore } from "../stores/fleets.ts";
import { pageInfo } from "./paging.ts";
import { definedOnly } from "./partial.ts";

export interface FleetInput {
  name?: string;
  description?: string;
  type?: FleetType;
  agent_ids?: string[];
  coordination_pattern?: Pattern;
  config?: Record<string, unknown>;
  status?: RecordStatus;
}

export interface FleetServiceDeps {
  fleets: FleetStore;
  agents: Pick<AgentStore, "byIds">;
}

export class FleetService {
  constructor(private readonly deps: FleetServiceDeps) {}

  private async check(owner: string, fleet: FleetRecord): Promise<void> {
    const found = await this.deps.agents.byIds(owner, fleet.agent_ids);
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
    if (issues.length) throw invalidRequest(issues);
  }

  async create(owner: string, input: FleetInput): Promise<FleetRecord> {
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
    await this.check(owner, fleet);
    await this.deps.fleets.insert(owner, fleet);
    return fleet;
  }

  async get(owner: string, id: string): Promise<FleetRecord> {
    const fleet = await this.deps.fleets.get(owner, id);
    if (!fleet) throw AppError.notFound(`Fleet ${id} not found`);
    return fleet;
  }

  async list(owner: string, filter: Page & { type?: string; status?: string }) {
    const { items, total } = await this.deps.fleets.list(owner, filter);
    return { fleets: items, ...pageInfo(filter, items.length, total) };
  }

  async update(owner: string, id: string, input: FleetInput): Promise<FleetRecord> {
    const fleet = await this.get(owner, id);
    const updated: FleetRecord = { ...fleet, ...definedOnly(input), updated_at: isoNow() };
    await this.check(owner, updated);
    await this.deps.fleets.update(owner, updated);
    return updated;
  }

  /** A fleet's memory goes with it; its agents stay. */
  async delete(owner: string, id: string): Promise<void> {
    await this.get(owner, id);
    await this.deps.fleets.delete(owner, id);
  }
}
