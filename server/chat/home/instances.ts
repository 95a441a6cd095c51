/**
 * The instances' own addresses (core table `instances`): where one instance forwards a request for a
 * user whose home another instance holds. Each instance writes only its own row, from `APP_INSTANCE_URL`
 * (checked here at start-up); a forward goes only to an address read from this table, never to one a
 * request names, so no caller can steer the server's own requests (docs/deploy.md "Several instances").
 */
import type { Db } from "../../storage/db/port.ts";

/**
 * `APP_INSTANCE_URL` as an origin (`http(s)://host:port`), or a message saying what is wrong with it:
 * no user info, path, query or fragment, so the forward's target is exactly the instance and nothing a
 * request adds can change it.
 */
export function instanceOrigin(value: string): { origin: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: "APP_INSTANCE_URL is not a URL (e.g. http://10.0.0.11:8000)" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { error: "APP_INSTANCE_URL must be an http:// or https:// URL" };
  if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== ""))
    return { error: "APP_INSTANCE_URL must be an origin only (scheme, host, port): no credentials or path" };
  return { origin: url.origin };
}

export class InstanceRegistry {
  constructor(private readonly db: Db) {}

  /** Records this instance's address; an older row on the same address (a restart) goes. */
  async register(id: string, origin: string): Promise<void> {
    await this.db.tx(async (tx) => {
      await tx.run("DELETE FROM instances WHERE url = ? OR id = ?", [origin, id]);
      await tx.run("INSERT INTO instances (id, url, started_at) VALUES (?, ?, ?)", [id, origin, Date.now()]);
    });
  }

  async unregister(id: string): Promise<void> {
    await this.db.run("DELETE FROM instances WHERE id = ?", [id]);
  }

  /** The address the instance `id` registered, if it did and still runs. */
  async originOf(id: string): Promise<string | undefined> {
    const row = await this.db.get<{ url: string }>("SELECT url FROM instances WHERE id = ?", [id]);
    return row?.url;
  }
}
