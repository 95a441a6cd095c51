/**
 * The SQL of personal access tokens (`auth_tokens`), all of it in this one class. Times are epoch
 * milliseconds; `scopes` is space-separated. A token is in force while its row exists, it has not
 * expired, and its owner's account (when the owner has one: managed-auth users do not) is not disabled.
 */
import type { Db } from "../storage/db/port.ts";

export interface TokenRow {
  id: string;
  owner_id: string;
  name: string;
  scopes: string;
  secret_hash: Uint8Array;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

/** A token row as lists show it: everything but the hash. */
export type TokenListRow = Omit<TokenRow, "secret_hash">;

const IN_FORCE = `t.id = ? AND (t.expires_at IS NULL OR t.expires_at > ?)
  AND NOT EXISTS (SELECT 1 FROM auth_accounts a WHERE a.user_id = t.owner_id AND a.disabled_at IS NOT NULL)`;

export class AccessTokenStore {
  constructor(private readonly db: Db) {}

  async insert(row: TokenRow): Promise<void> {
    await this.db.run(
      `INSERT INTO auth_tokens (id, owner_id, name, scopes, secret_hash, created_at, last_used_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.name,
        row.scopes,
        row.secret_hash,
        row.created_at,
        row.last_used_at,
        row.expires_at,
      ],
    );
  }

  /** The row of a token in force, or undefined (unknown, expired, or its account disabled): one read. */
  inForce(id: string, now: number): Promise<TokenRow | undefined> {
    return this.db.get<TokenRow>(`SELECT t.* FROM auth_tokens t WHERE ${IN_FORCE}`, [id, now]);
  }

  /** Whether a token is still in force (open connections re-check this every second). */
  async stillInForce(id: string, now: number): Promise<boolean> {
    return (
      (await this.db.get(`SELECT 1 AS ok FROM auth_tokens t WHERE ${IN_FORCE}`, [id, now])) !== undefined
    );
  }

  /** An owner's tokens, newest first (expired ones included, so the owner sees them lapse). */
  listOf(owner: string): Promise<TokenListRow[]> {
    return this.db.all<TokenListRow>(
      `SELECT id, owner_id, name, scopes, created_at, last_used_at, expires_at FROM auth_tokens
       WHERE owner_id = ? ORDER BY created_at DESC, id`,
      [owner],
    );
  }

  async touch(id: string, now: number): Promise<void> {
    await this.db.run("UPDATE auth_tokens SET last_used_at = ? WHERE id = ?", [now, id]);
  }

  /** Deletes an owner's token; false when the owner has no token of that id. */
  async delete(owner: string, id: string): Promise<boolean> {
    return (
      (await this.db.run("DELETE FROM auth_tokens WHERE owner_id = ? AND id = ?", [owner, id])).changes > 0
    );
  }
}
