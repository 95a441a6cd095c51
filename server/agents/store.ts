/**
 * SQL for agents and fleets. Every statement is scoped by `owner_id`: a row of another owner does not
 * exist here. JSON columns (capabilities, config) are decoded into records; timestamps are ISO 8601.
 */
import type { Capability, FleetType, Pattern, RecordStatus } from "../../schemas/agents.ts";
import type { Store } from "../storage/store.ts";

export interface AgentRecord {
  id: string;
  name: string;
  role: string;
  description: string;
  capabilities: Capability[];
  model: string | null;
  instructions: string;
  config: Record<string, unknown>;
  status: RecordStatus;
  created_at: string;
  updated_at: string;
}

export interface FleetRecord {
  id: string;
  name: string;
  description: string;
  type: FleetType;
  agent_ids: string[];
  coordination_pattern: Pattern;
  config: Record<string, unknown>;
  status: RecordStatus;
  created_at: string;
  updated_at: string;
}

type AgentRow = Omit<AgentRecord, "capabilities" | "config"> & { capabilities: string; config: string };
type FleetRow = Omit<FleetRecord, "agent_ids" | "config"> & { config: string };

const AGENT_COLUMNS =
  "id, name, role, description, capabilities, model, instructions, config, status, created_at, updated_at";
const FLEET_COLUMNS =
  "id, name, description, type, coordination_pattern, config, status, created_at, updated_at";

function agentOf(row: AgentRow): AgentRecord {
  return { ...row, capabilities: JSON.parse(row.capabilities), config: JSON.parse(row.config) };
}

/** Statement parameters for a record (bindings a statement does not name are ignored). */
function agentBindings(owner: string, agent: AgentRecord) {
  return {
    ...agent,
    capabilities: JSON.stringify(agent.capabilities),
    config: JSON.stringify(agent.config),
    owner,
  };
}

function fleetBindings(owner: string, fleet: FleetRecord) {
  const { agent_ids: _members, ...fields } = fleet;
  return { ...fields, config: JSON.stringify(fleet.config), owner };
}

export class AgentStore {
  constructor(private readonly store: Store) {}

  insertAgent(owner: string, agent: AgentRecord): void {
    this.store.run(
      `INSERT INTO agents (${AGENT_COLUMNS}, owner_id)
       VALUES ($id, $name, $role, $description, $capabilities, $model, $instructions, $config, $status, $created_at, $updated_at, $owner)`,
      agentBindings(owner, agent),
    );
  }

  updateAgent(owner: string, agent: AgentRecord): void {
    this.store.run(
      `UPDATE agents SET name = $name, role = $role, description = $description, capabilities = $capabilities,
         model = $model, instructions = $instructions, config = $config, status = $status, updated_at = $updated_at
       WHERE id = $id AND owner_id = $owner`,
      agentBindings(owner, agent),
    );
  }

  getAgent(owner: string, id: string): AgentRecord | undefined {
    const row = this.store.get<AgentRow>(
      `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $id AND owner_id = $owner`,
      { id, owner },
    );
    return row && agentOf(row);
  }

  /** The agents among `ids` that this owner has, keyed by id. */
  agentsByIds(owner: string, ids: string[]): Map<string, AgentRecord> {
    const rows = this.store.all<AgentRow>(
      `SELECT ${AGENT_COLUMNS} FROM agents
       WHERE owner_id = $owner AND id IN (SELECT value FROM json_each($ids))`,
      { owner, ids: JSON.stringify(ids) },
    );
    return new Map(rows.map((row) => [row.id, agentOf(row)]));
  }

  listAgents(owner: string, filter: { status?: string; limit: number; offset: number }) {
    const params = { owner, status: filter.status ?? null, limit: filter.limit, offset: filter.offset };
    const where = "owner_id = $owner AND ($status IS NULL OR status = $status)";
    const rows = this.store.all<AgentRow>(
      `SELECT ${AGENT_COLUMNS} FROM agents WHERE ${where} ORDER BY created_at, id LIMIT $limit OFFSET $offset`,
      params,
    );
    const total = this.store.get<{ n: number }>(`SELECT count(*) AS n FROM agents WHERE ${where}`, {
      owner,
      status: params.status,
    });
    return { items: rows.map(agentOf), total: total?.n ?? 0 };
  }

  deleteAgent(owner: string, id: string): void {
    this.deleteHolder(owner, "agent", id);
  }

  /** Deletes an agent or a fleet together with the memory entries it holds. */
  private deleteHolder(owner: string, kind: "agent" | "fleet", id: string): void {
    const table = kind === "agent" ? "agents" : "fleets";
    this.store.tx(() => {
      this.store.run(
        "DELETE FROM memory_entries WHERE owner_id = $owner AND holder_type = $kind AND holder_id = $id",
        { owner, kind, id },
      );
      this.store.run(`DELETE FROM ${table} WHERE id = $id AND owner_id = $owner`, { id, owner });
    });
  }

  /** Fleets (id and name) that list the agent as a member. */
  fleetsUsingAgent(owner: string, agentId: string): { id: string; name: string }[] {
    return this.store.all(
      `SELECT f.id, f.name FROM fleet_agents fa JOIN fleets f ON f.id = fa.fleet_id
       WHERE fa.owner_id = $owner AND fa.agent_id = $agentId ORDER BY f.created_at, f.id`,
      { owner, agentId },
    );
  }

  insertFleet(owner: string, fleet: FleetRecord): void {
    this.store.tx(() => {
      this.store.run(
        `INSERT INTO fleets (${FLEET_COLUMNS}, owner_id)
         VALUES ($id, $name, $description, $type, $coordination_pattern, $config, $status, $created_at, $updated_at, $owner)`,
        fleetBindings(owner, fleet),
      );
      this.setMembers(owner, fleet.id, fleet.agent_ids);
    });
  }

  updateFleet(owner: string, fleet: FleetRecord): void {
    this.store.tx(() => {
      this.store.run(
        `UPDATE fleets SET name = $name, description = $description, type = $type,
           coordination_pattern = $coordination_pattern, config = $config, status = $status, updated_at = $updated_at
         WHERE id = $id AND owner_id = $owner`,
        fleetBindings(owner, fleet),
      );
      this.store.run("DELETE FROM fleet_agents WHERE fleet_id = $id AND owner_id = $owner", {
        id: fleet.id,
        owner,
      });
      this.setMembers(owner, fleet.id, fleet.agent_ids);
    });
  }

  private setMembers(owner: string, fleetId: string, agentIds: string[]): void {
    agentIds.forEach((agentId, position) => {
      this.store.run(
        "INSERT INTO fleet_agents (owner_id, fleet_id, agent_id, position) VALUES ($owner, $fleetId, $agentId, $position)",
        { owner, fleetId, agentId, position },
      );
    });
  }

  getFleet(owner: string, id: string): FleetRecord | undefined {
    const row = this.store.get<FleetRow>(
      `SELECT ${FLEET_COLUMNS} FROM fleets WHERE id = $id AND owner_id = $owner`,
      { id, owner },
    );
    return row && this.fleetOf(owner, row);
  }

  listFleets(owner: string, filter: { type?: string; status?: string; limit: number; offset: number }) {
    const where =
      "owner_id = $owner AND ($type IS NULL OR type = $type) AND ($status IS NULL OR status = $status)";
    const params = { owner, type: filter.type ?? null, status: filter.status ?? null };
    const rows = this.store.all<FleetRow>(
      `SELECT ${FLEET_COLUMNS} FROM fleets WHERE ${where} ORDER BY created_at, id LIMIT $limit OFFSET $offset`,
      { ...params, limit: filter.limit, offset: filter.offset },
    );
    const total = this.store.get<{ n: number }>(`SELECT count(*) AS n FROM fleets WHERE ${where}`, params);
    return { items: rows.map((row) => this.fleetOf(owner, row)), total: total?.n ?? 0 };
  }

  deleteFleet(owner: string, id: string): void {
    this.deleteHolder(owner, "fleet", id);
  }

  private fleetOf(owner: string, row: FleetRow): FleetRecord {
    const members = this.store.all<{ agent_id: string }>(
      "SELECT agent_id FROM fleet_agents WHERE fleet_id = $id AND owner_id = $owner ORDER BY position",
      { id: row.id, owner },
    );
    return { ...row, config: JSON.parse(row.config), agent_ids: members.map((m) => m.agent_id) };
  }
}
