/**
 * The per-user sandbox registry (table `user_sandboxes`): one row per owner naming the provider, the
 * provider's id for the sandbox and its lifecycle state. Owners are keyed by `owner_id` like every
 * user-data row, so deleting a user removes their sandbox record too. On the database port (app.db or
 * PostgreSQL).
 */
import type { Db } from "../../storage/db/port.ts";

export const SANDBOX_STATES = ["started", "stopped", "archived", "deleted"] as const;
export type SandboxState = (typeof SANDBOX_STATES)[number];

export interface SandboxRecord {
  owner: string;
  provider: string;
  sandboxId: string;
  state: SandboxState;
  updatedAt: string;
}

interface Row {
  owner_id: string;
  provider: string;
  sandbox_id: string;
  state: SandboxState;
  updated_at: string;
}

const record = (row: Row): SandboxRecord => ({
  owner: row.owner_id,
  provider: row.provider,
  sandboxId: row.sandbox_id,
  state: row.state,
  updatedAt: row.updated_at,
});

export class SandboxRegistry {
  constructor(private readonly db: Db) {}

  async of(owner: string): Promise<SandboxRecord | undefined> {
    const row = await this.db.get<Row>("SELECT * FROM user_sandboxes WHERE owner_id = ?", [owner]);
    return row && record(row);
  }

  /** The record of a provider's sandbox id (webhooks name the sandbox, not the user). */
  async bySandboxId(sandboxId: string): Promise<SandboxRecord | undefined> {
    const row = await this.db.get<Row>("SELECT * FROM user_sandboxes WHERE sandbox_id = ? LIMIT 1", [
      sandboxId,
    ]);
    return row && record(row);
  }

  async put(owner: string, provider: string, sandboxId: string, state: SandboxState): Promise<void> {
    await this.db.run(
      `INSERT INTO user_sandboxes (owner_id, provider, sandbox_id, state) VALUES (?, ?, ?, ?)
       ON CONFLICT (owner_id) DO UPDATE SET provider = excluded.provider, sandbox_id = excluded.sandbox_id,
         state = excluded.state, updated_at = ${this.db.dialect.nowIso}`,
      [owner, provider, sandboxId, state],
    );
  }

  async setState(owner: string, state: SandboxState): Promise<boolean> {
    const sql = `UPDATE user_sandboxes SET state = ?, updated_at = ${this.db.dialect.nowIso} WHERE owner_id = ?`;
    return (await this.db.run(sql, [state, owner])).changes > 0;
  }
}
