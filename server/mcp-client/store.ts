/** The MCP servers users added (`mcp_servers`): one row per owner and name, secrets in `headers`. */
import type { Store } from "../storage/store.ts";
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

export class McpServerStore {
  constructor(private readonly db: Store) {}

  all(owner: string): McpServerConfig[] {
    return this.db
      .all<Row>("SELECT * FROM mcp_servers WHERE owner_id = ? ORDER BY name", [owner])
      .map(fromRow);
  }

  one(owner: string, name: string): McpServerConfig | undefined {
    const row = this.db.get<Row>("SELECT * FROM mcp_servers WHERE owner_id = ? AND name = ?", [owner, name]);
    return row ? fromRow(row) : undefined;
  }

  put(owner: string, config: McpServerConfig): void {
    this.db.run(
      `INSERT INTO mcp_servers (owner_id, name, transport, url, command, args, headers, approval, enabled)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (owner_id, name) DO UPDATE SET transport = excluded.transport, url = excluded.url,
         command = excluded.command, args = excluded.args, headers = excluded.headers,
         approval = excluded.approval, enabled = excluded.enabled,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
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

  remove(owner: string, name: string): boolean {
    return this.db.run("DELETE FROM mcp_servers WHERE owner_id = ? AND name = ?", [owner, name]).changes > 0;
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
