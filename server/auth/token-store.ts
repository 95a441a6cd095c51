/**
 * The SQL of personal access tokens (`auth_tokens`), all of it in this one class. Times are epoch
 * milliseconds; `scopes` is space-separated. A token is in force while its row exists, it has not
 * expired, and its owner's account (when the owner has one: managed-auth users do not) is not disabled.
 */
import type { Store } from "../storage/store.ts";

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
  constructor(private readonly store: Store) {}

  insert(row: TokenRow): void {
    this.store.run(
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

  /** The row of a token in force, or undefined (unknown, expired, or its account disabled). */
  inForce(id: string, now: number): TokenRow | undefined {
    return this.store.get<TokenRow>(`SELECT t.* FROM auth_tokens t WHERE ${IN_FORCE}`, [id, now]);
  }

  /** Whether a token is still in force (open connections re-check this every second). */
  stillInForce(id: string, now: number): boolean {
    return this.store.get(`SELECT 1 AS ok FROM auth_tokens t WHERE ${IN_FORCE}`, [id, now]) !== undefined;
  }

  /** An owner's tokens, newest first (expired ones included, so the owner sees them lapse). */
  listOf(owner: string): TokenListRow[] {
    return this.store.all<TokenListRow>(
      `SELECT id, owner_id, name, scopes, created_at, last_used_at, expires_at FROM auth_tokens
       WHERE owner_id = ? ORDER BY created_at DESC, id`,
      [owner],
    );
  }

  touch(id: string, now: number): void {
    this.store.run("UPDATE auth_tokens SET last_used_at = ? WHERE id = ?", [now, id]);
  }

  /** Deletes an owner's token; false when the owner has no token of that id. */
  delete(owner: string, id: string): boolean {
    return this.store.run("DELETE FROM auth_tokens WHERE owner_id = ? AND id = ?", [owner, id]).changes > 0;
  }
}
