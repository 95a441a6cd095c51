/**
 * Picks the engine: a `postgres://` (or `postgresql://`) URL in `APP_DATABASE_URL` (the variable
 * `[database] url_env` of config/policy.toml names) opens PostgreSQL; unset, the embedded `app.db` in
 * the data dir. Any other URL is refused at start rather than silently ignored.
 */
import { join } from "node:path";
import type { Db } from "./port.ts";
import { openPostgres } from "./postgres.ts";
import { openSqlite } from "./sqlite.ts";

export class DatabaseUrlError extends Error {
  override name = "DatabaseUrlError";
}

export interface OpenOptions {
  /** The database URL from the policy's variable, if set. */
  url?: string;
  /** The data dir, home of the embedded `app.db` when no URL is set. */
  dataDir: string;
  poolSize?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export function openDb({ url, dataDir, poolSize }: OpenOptions): Db {
  if (url === undefined || url === "") return openSqlite(join(dataDir, "app.db"));
  // The URL may carry a password: never repeat it in the message.
  if (!isPostgresUrl(url)) {
    throw new DatabaseUrlError(
      "the database URL must start with postgres:// (unset it to use the embedded app.db)",
    );
  }
  return openPostgres(url, { poolSize });
}
