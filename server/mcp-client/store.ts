/**
 * The MCP servers users added (`mcp_servers`): one row per owner and name, secrets in `headers`. On the
 * database port (`ctx.database`): app.db, or PostgreSQL when APP_DATABASE_URL is set.
 */
import type { Db } from "../storage/db/port.ts";
import type { McpServerConfig } from "./servers.ts";

interface Row {
  name: string;
  transport: "http" | "stdio";
  url: string | null;
  command: string | null;
  args: string;
  headers: string;
  approval: "ask" | "allow";
  enabled: number;
}

const COLUMNS = "name, transport, url, command, args, headers, approval, enabled";

export class McpServerStore {
  constructor(private readonly db: Db) {}

  async all(owner: string): Promise<McpServerConfig[]> {
    // Byte order on both engines: SQLite's own, PostgreSQL's "C" (its default collation sorts by locale).
    const collate = this.db.engine === "postgres" ? ' COLLATE "C"' : "";
    const rows = await this.db.all<Row>(
      `SELECT ${COLUMNS} FROM mcp_servers WHERE owner_id = ? ORDER BY name${collate}`,
      [owner],
    );
    return rows.map(fromRow);
  }

  async one(owner: string, name: string): Promise<McpServerConfig | undefined> {
    const row = await this.db.get<Row>(`SELECT ${COLUMNS} FROM mcp_servers WHERE owner_id = ? AND name = ?`, [
      owner,
      name,
    ]);
    return row ? fromRow(row) : undefined;
  }

  async put(owner: string, config: McpServerConfig): Promise<void> {
    await this.db.run(
      `INSERT INTO mcp_servers (owner_id, name, transport, url, command, args, headers, approval, enabled)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (owner_id, name) DO UPDATE SET transport = excluded.transport, url = excluded.url,
         command = excluded.command, args = excluded.args, headers = excluded.headers,
         approval = excluded.approval, enabled = excluded.enabled,
         updated_at = ${this.db.dialect.nowIso}`,
      [
        owner,
        config.name,
        config.transport,
        config.url ?? null,
        config.command ?? null,
        JSON.stringify(config.args),
        JSON.stringify(config.headers),
        config.approval,
        config.enabled ? 1 : 0,
      ],
    );
  }

  async remove(owner: string, name: string): Promise<boolean> {
    const { changes } = await this.db.run("DELETE FROM mcp_servers WHERE owner_id = ? AND name = ?", [
      owner,
      name,
    ]);
    return changes > 0;
  }
}

function fromRow(row: Row): McpServerConfig {
  return {
    name: row.name,
    scope: "user",
    transport: row.transport,
    ...(row.url ? { url: row.url } : {}),
    ...(row.command ? { command: row.command } : {}),
    args: JSON.parse(row.args) as string[],
    headers: JSON.parse(row.headers) as Record<string, string>,
    approval: row.approval,
    enabled: row.enabled === 1,
  };
}
