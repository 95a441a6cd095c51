/**
 * SQL for fleets and their ordered members (`fleet_agents`; the order is the sequential pattern's
 * order). Every statement is scoped by `owner_id`. The config column is JSON; timestamps are ISO 8601.
 */
import type { FleetType, Pattern, RecordStatus } from "../../../schemas/agents.ts";
import type { Store } from "../../storage/store.ts";
import { deleteHolder } from "./holders.ts";

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

type FleetRow = Omit<FleetRecord, "agent_ids" | "config"> & { config: string };

const COLUMNS = "id, name, description, type, coordination_pattern, config, status, created_at, updated_at";

function bindings(owner: string, fleet: FleetRecord) {
  const { agent_ids: _members, ...fields } = fleet;
  return { ...fields, config: JSON.stringify(fleet.config), owner };
}

export class FleetStore {
  constructor(private readonly store: Store) {}

  insert(owner: string, fleet: FleetRecord): void {
    this.store.tx(() => {
      this.store.run(
        `INSERT INTO fleets (${COLUMNS}, owner_id)
         VALUES ($id, $name, $description, $type, $coordination_pattern, $config, $status, $created_at, $updated_at, $owner)`,
        bindings(owner, fleet),
      );
      this.setMembers(owner, fleet.id, fleet.agent_ids);
    });
  }

  update(owner: string, fleet: FleetRecord): void {
    this.store.tx(() => {
      this.store.run(
        `UPDATE fleets SET name = $name, description = $description, type = $type,
           coordination_pattern = $coordination_pattern, config = $config, status = $status, updated_at = $updated_at
         WHERE id = $id AND owner_id = $owner`,
        bindings(owner, fleet),
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

  get(owner: string, id: string): FleetRecord | undefined {
    const row = this.store.get<FleetRow>(
      `SELECT ${COLUMNS} FROM fleets WHERE id = $id AND owner_id = $owner`,
      {
        id,
        owner,
      },
    );
    return row && this.fleetOf(owner, row);
  }

  list(owner: string, filter: { type?: string; status?: string; limit: number; offset: number }) {
    const where =
      "owner_id = $owner AND ($type IS NULL OR type = $type) AND ($status IS NULL OR status = $status)";
    const params = { owner, type: filter.type ?? null, status: filter.status ?? null };
    const rows = this.store.all<FleetRow>(
      `SELECT ${COLUMNS} FROM fleets WHERE ${where} ORDER BY created_at, id LIMIT $limit OFFSET $offset`,
      { ...params, limit: filter.limit, offset: filter.offset },
    );
    const total = this.store.get<{ n: number }>(`SELECT count(*) AS n FROM fleets WHERE ${where}`, params);
    return { items: rows.map((row) => this.fleetOf(owner, row)), total: total?.n ?? 0 };
  }

  /** Deletes the fleet (its member rows cascade) and the memory entries it holds; its agents stay. */
  delete(owner: string, id: string): void {
    deleteHolder(this.store, "fleet", owner, id);
  }

  /** Fleets (id and name) that list the agent as a member. */
  withMember(owner: string, agentId: string): { id: string; name: string }[] {
    return this.store.all(
      `SELECT f.id, f.name FROM fleet_agents fa JOIN fleets f ON f.id = fa.fleet_id
       WHERE fa.owner_id = $owner AND fa.agent_id = $agentId ORDER BY f.created_at, f.id`,
      { owner, agentId },
    );
  }

  private fleetOf(owner: string, row: FleetRow): FleetRecord {
    const members = this.store.all<{ agent_id: string }>(
      "SELECT agent_id FROM fleet_agents WHERE fleet_id = $id AND owner_id = $owner ORDER BY position",
      { id: row.id, owner },
    );
    return { ...row, config: JSON.parse(row.config), agent_ids: members.map((m) => m.agent_id) };
  }
}
