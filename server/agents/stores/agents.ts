/**
 * SQL for agents. Every statement is scoped by `owner_id`: a row of another owner does not exist here.
 * JSON columns (capabilities, config) are decoded into records; timestamps are ISO 8601.
 */
import type { Capability, RecordStatus } from "../../../schemas/agents.ts";
import type { Store } from "../../storage/store.ts";
import { deleteHolder } from "./holders.ts";

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

type AgentRow = Omit<AgentRecord, "capabilities" | "config"> & { capabilities: string; config: string };

const COLUMNS =
  "id, name, role, description, capabilities, model, instructions, config, status, created_at, updated_at";

function agentOf(row: AgentRow): AgentRecord {
  return { ...row, capabilities: JSON.parse(row.capabilities), config: JSON.parse(row.config) };
}

/** Statement parameters for a record (bindings a statement does not name are ignored). */
function bindings(owner: string, agent: AgentRecord) {
  return {
    ...agent,
    capabilities: JSON.stringify(agent.capabilities),
    config: JSON.stringify(agent.config),
    owner,
  };
}

export class AgentStore {
  constructor(private readonly store: Store) {}

  insert(owner: string, agent: AgentRecord): void {
    this.store.run(
      `INSERT INTO agents (${COLUMNS}, owner_id)
       VALUES ($id, $name, $role, $description, $capabilities, $model, $instructions, $config, $status, $created_at, $updated_at, $owner)`,
      bindings(owner, agent),
    );
  }

  update(owner: string, agent: AgentRecord): void {
    this.store.run(
      `UPDATE agents SET name = $name, role = $role, description = $description, capabilities = $capabilities,
         model = $model, instructions = $instructions, config = $config, status = $status, updated_at = $updated_at
       WHERE id = $id AND owner_id = $owner`,
      bindings(owner, agent),
    );
  }

  get(owner: string, id: string): AgentRecord | undefined {
    const row = this.store.get<AgentRow>(
      `SELECT ${COLUMNS} FROM agents WHERE id = $id AND owner_id = $owner`,
      {
        id,
        owner,
      },
    );
    return row && agentOf(row);
  }

  /** The agents among `ids` that this owner has, keyed by id. */
  byIds(owner: string, ids: string[]): Map<string, AgentRecord> {
    const rows = this.store.all<AgentRow>(
      `SELECT ${COLUMNS} FROM agents
       WHERE owner_id = $owner AND id IN (SELECT value FROM json_each($ids))`,
      { owner, ids: JSON.stringify(ids) },
    );
    return new Map(rows.map((row) => [row.id, agentOf(row)]));
  }

  list(owner: string, filter: { status?: string; limit: number; offset: number }) {
    const params = { owner, status: filter.status ?? null };
    const where = "owner_id = $owner AND ($status IS NULL OR status = $status)";
    const rows = this.store.all<AgentRow>(
      `SELECT ${COLUMNS} FROM agents WHERE ${where} ORDER BY created_at, id LIMIT $limit OFFSET $offset`,
      { ...params, limit: filter.limit, offset: filter.offset },
    );
    const total = this.store.get<{ n: number }>(`SELECT count(*) AS n FROM agents WHERE ${where}`, params);
    return { items: rows.map(agentOf), total: total?.n ?? 0 };
  }

  /** Deletes the agent and the memory entries it holds. */
  delete(owner: string, id: string): void {
    deleteHolder(this.store, "agent", owner, id);
  }
}
