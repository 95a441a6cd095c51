/**
 * SQL for agents. Every statement is scoped by `owner_id`: a row of another owner does not exist here.
 * JSON columns (capabilities, config) are decoded into records; timestamps are ISO 8601. Over the
 * database port (either engine).
 */
import type { Capability, RecordStatus } from "../../../schemas/agents.ts";
import type { Db } from "../../storage/db/port.ts";
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

/** A record's columns in COLUMNS order, JSON columns encoded. */
function values(agent: AgentRecord) {
  return [
    agent.id,
    agent.name,
    agent.role,
    agent.description,
    JSON.stringify(agent.capabilities),
    agent.model,
    agent.instructions,
    JSON.stringify(agent.config),
    agent.status,
    agent.created_at,
    agent.updated_at,
  ];
}

export class AgentStore {
  constructor(private readonly db: Db) {}

  async insert(owner: string, agent: AgentRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO agents (${COLUMNS}, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [...values(agent), owner],
    );
  }

  async update(owner: string, agent: AgentRecord): Promise<void> {
    await this.db.run(
      `UPDATE agents SET name = ?, role = ?, description = ?, capabilities = ?,
         model = ?, instructions = ?, config = ?, status = ?, updated_at = ?
       WHERE id = ? AND owner_id = ?`,
      [...values(agent).slice(1, 9), agent.updated_at, agent.id, owner],
    );
  }

  async get(owner: string, id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.get<AgentRow>(`SELECT ${COLUMNS} FROM agents WHERE id = ? AND owner_id = ?`, [
      id,
      owner,
    ]);
    return row && agentOf(row);
  }

  /** The agents among `ids` that this owner has, keyed by id. */
  async byIds(owner: string, ids: string[]): Promise<Map<string, AgentRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.all<AgentRow>(
      `SELECT ${COLUMNS} FROM agents WHERE owner_id = ? AND id IN (${ids.map(() => "?").join(", ")})`,
      [owner, ...ids],
    );
    return new Map(rows.map((row) => [row.id, agentOf(row)]));
  }

  async list(owner: string, filter: { status?: string; limit: number; offset: number }) {
    const status = filter.status ?? null;
    const where = "owner_id = ? AND (CAST(? AS TEXT) IS NULL OR status = ?)";
    const params = [owner, status, status];
    const rows = await this.db.all<AgentRow>(
      `SELECT ${COLUMNS} FROM agents WHERE ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [...params, filter.limit, filter.offset],
    );
    const total = await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM agents WHERE ${where}`, params);
    return { items: rows.map(agentOf), total: total?.n ?? 0 };
  }

  /** Deletes the agent and the memory entries it holds. */
  delete(owner: string, id: string): Promise<void> {
    return deleteHolder(this.db, "agent", owner, id);
  }
}
