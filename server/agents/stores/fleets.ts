/**
 * SQL for fleets and their ordered members (`fleet_agents`; the order is the sequential pattern's
 * order). Every statement is scoped by `owner_id`. The config column is JSON; timestamps are ISO 8601.
 * Over the database port (either engine).
 */
import type { FleetType, Pattern, RecordStatus } from "../../../schemas/agents.ts";
import type { Db, Queryable } from "../../storage/db/port.ts";
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

export class FleetStore {
  constructor(private readonly db: Db) {}

  insert(owner: string, fleet: FleetRecord): Promise<void> {
    return this.db.tx(async (tx) => {
      await tx.run(`INSERT INTO fleets (${COLUMNS}, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        fleet.id,
        fleet.name,
        fleet.description,
        fleet.type,
        fleet.coordination_pattern,
        JSON.stringify(fleet.config),
        fleet.status,
        fleet.created_at,
        fleet.updated_at,
        owner,
      ]);
      await setMembers(tx, owner, fleet.id, fleet.agent_ids);
    });
  }

  update(owner: string, fleet: FleetRecord): Promise<void> {
    return this.db.tx(async (tx) => {
      await tx.run(
        `UPDATE fleets SET name = ?, description = ?, type = ?, coordination_pattern = ?, config = ?, status = ?,
           updated_at = ?
         WHERE id = ? AND owner_id = ?`,
        [
          fleet.name,
          fleet.description,
          fleet.type,
          fleet.coordination_pattern,
          JSON.stringify(fleet.config),
          fleet.status,
          fleet.updated_at,
          fleet.id,
          owner,
        ],
      );
      await tx.run("DELETE FROM fleet_agents WHERE fleet_id = ? AND owner_id = ?", [fleet.id, owner]);
      await setMembers(tx, owner, fleet.id, fleet.agent_ids);
    });
  }

  async get(owner: string, id: string): Promise<FleetRecord | undefined> {
    const row = await this.db.get<FleetRow>(`SELECT ${COLUMNS} FROM fleets WHERE id = ? AND owner_id = ?`, [
      id,
      owner,
    ]);
    return row && (await this.withMembers(owner, [row]))[0];
  }

  async list(owner: string, filter: { type?: string; status?: string; limit: number; offset: number }) {
    const where =
      "owner_id = ? AND (CAST(? AS TEXT) IS NULL OR type = ?) AND (CAST(? AS TEXT) IS NULL OR status = ?)";
    const type = filter.type ?? null;
    const status = filter.status ?? null;
    const params = [owner, type, type, status, status];
    const rows = await this.db.all<FleetRow>(
      `SELECT ${COLUMNS} FROM fleets WHERE ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [...params, filter.limit, filter.offset],
    );
    const total = await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM fleets WHERE ${where}`, params);
    return { items: await this.withMembers(owner, rows), total: total?.n ?? 0 };
  }

  /** Deletes the fleet (its member rows cascade) and the memory entries it holds; its agents stay. */
  delete(owner: string, id: string): Promise<void> {
    return deleteHolder(this.db, "fleet", owner, id);
  }

  /** Fleets (id and name) that list the agent as a member. */
  withMember(owner: string, agentId: string): Promise<{ id: string; name: string }[]> {
    return this.db.all(
      `SELECT f.id, f.name FROM fleet_agents fa JOIN fleets f ON f.id = fa.fleet_id
       WHERE fa.owner_id = ? AND fa.agent_id = ? ORDER BY f.created_at, f.id`,
      [owner, agentId],
    );
  }

  /** The rows as records with their members, read in one statement for the whole page. */
  private async withMembers(owner: string, rows: FleetRow[]): Promise<FleetRecord[]> {
    if (rows.length === 0) return [];
    const members = await this.db.all<{ fleet_id: string; agent_id: string }>(
      `SELECT fleet_id, agent_id FROM fleet_agents
       WHERE owner_id = ? AND fleet_id IN (${rows.map(() => "?").join(", ")}) ORDER BY fleet_id, position`,
      [owner, ...rows.map((row) => row.id)],
    );
    const byFleet = new Map<string, string[]>();
    for (const m of members) byFleet.set(m.fleet_id, [...(byFleet.get(m.fleet_id) ?? []), m.agent_id]);
    return rows.map((row) => ({
      ...row,
      config: JSON.parse(row.config),
      agent_ids: byFleet.get(row.id) ?? [],
    }));
  }
}

async function setMembers(tx: Queryable, owner: string, fleetId: string, agentIds: string[]): Promise<void> {
  if (agentIds.length === 0) return;
  await tx.run(
    `INSERT INTO fleet_agents (owner_id, fleet_id, agent_id, position) VALUES ${agentIds.map(() => "(?, ?, ?, ?)").join(", ")}`,
    agentIds.flatMap((agentId, position) => [owner, fleetId, agentId, position]),
  );
}
