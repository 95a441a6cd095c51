/**
 * The SQL of session auth: accounts (a `users` row plus email, password hash, admin and disabled
 * flags), sessions and invites. Emails are stored lower-cased and trimmed, so lookups are exact. On the
 * database port (app.db or PostgreSQL); the methods a transaction of session-auth.ts runs take its `tx`.
 */
import type { Db, Queryable } from "../storage/db/port.ts";

export interface AccountRow {
  user_id: string;
  email: string;
  display_name: string;
  password_hash: string;
  admin: number;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AuthSessionRow {
  id: string;
  user_id: string;
  secret_hash: Uint8Array;
  created_at: number;
  expires_at: number;
}

export interface InviteRow {
  code_hash: string;
  admin: number;
  created_by: string;
  created_at: number;
  expires_at: number;
  used_by: string | null;
  used_at: number | null;
}

const ACCOUNT = `SELECT a.user_id, a.email, u.display_name, a.password_hash, a.admin, a.disabled_at,
  a.created_at, a.updated_at FROM auth_accounts a JOIN users u ON u.id = a.user_id`;

/** A session with its account, as one read (every request of a signed-in browser makes it). */
export type SessionWithAccount = AuthSessionRow & { account: AccountRow };

export class AccountStore {
  constructor(readonly db: Db) {}

  byEmail(email: string): Promise<AccountRow | undefined> {
    return this.db.get<AccountRow>(`${ACCOUNT} WHERE a.email = ?`, [email]);
  }

  byId(userId: string, q: Queryable = this.db): Promise<AccountRow | undefined> {
    return q.get<AccountRow>(`${ACCOUNT} WHERE a.user_id = ?`, [userId]);
  }

  list(): Promise<AccountRow[]> {
    return this.db.all<AccountRow>(`${ACCOUNT} ORDER BY a.created_at, a.email`);
  }

  async count(): Promise<number> {
    return (await this.db.get<{ n: number }>("SELECT count(*) AS n FROM auth_accounts"))?.n ?? 0;
  }

  /** The `users` row and the account, together (inside the caller's transaction when it gives one). */
  async insert(
    account: { userId: string; email: string; name: string; passwordHash: string; admin: boolean },
    q?: Queryable,
  ): Promise<void> {
    const write = async (tx: Queryable) => {
      await tx.run("INSERT INTO users (id, display_name) VALUES (?, ?)", [account.userId, account.name]);
      await tx.run("INSERT INTO auth_accounts (user_id, email, password_hash, admin) VALUES (?, ?, ?, ?)", [
        account.userId,
        account.email,
        account.passwordHash,
        account.admin ? 1 : 0,
      ]);
    };
    if (q) await write(q);
    else await this.db.tx(write);
  }

  async update(
    userId: string,
    changes: { passwordHash?: string; admin?: boolean; disabled?: boolean },
    q: Queryable = this.db,
  ): Promise<boolean> {
    const now = this.db.dialect.nowIso;
    const sets: string[] = [];
    const params: (string | number | null)[] = [];
    if (changes.passwordHash !== undefined) {
      sets.push("password_hash = ?");
      params.push(changes.passwordHash);
    }
    if (changes.admin !== undefined) {
      sets.push("admin = ?");
      params.push(changes.admin ? 1 : 0);
    }
    if (changes.disabled !== undefined)
      sets.push(changes.disabled ? `disabled_at = ${now}` : "disabled_at = NULL");
    if (sets.length === 0) return false;
    sets.push(`updated_at = ${now}`);
    const sql = `UPDATE auth_accounts SET ${sets.join(", ")} WHERE user_id = ?`;
    return (await q.run(sql, [...params, userId])).changes > 0;
  }

  session(id: string): Promise<AuthSessionRow | undefined> {
    return this.db.get<AuthSessionRow>("SELECT * FROM auth_sessions WHERE id = ?", [id]);
  }

  /** A session and its account in one round trip; undefined when either is gone. */
  async sessionWithAccount(id: string): Promise<SessionWithAccount | undefined> {
    const row = await this.db.get<
      AuthSessionRow & Omit<AccountRow, "created_at"> & { account_created_at: string }
    >(
      `SELECT s.id, s.user_id, s.secret_hash, s.created_at, s.expires_at, a.email, u.display_name,
         a.password_hash, a.admin, a.disabled_at, a.created_at AS account_created_at, a.updated_at
       FROM auth_sessions s JOIN auth_accounts a ON a.user_id = s.user_id JOIN users u ON u.id = s.user_id
       WHERE s.id = ?`,
      [id],
    );
    if (!row) return undefined;
    return {
      id: row.id,
      user_id: row.user_id,
      secret_hash: row.secret_hash,
      created_at: row.created_at,
      expires_at: row.expires_at,
      account: {
        user_id: row.user_id,
        email: row.email,
        display_name: row.display_name,
        password_hash: row.password_hash,
        admin: row.admin,
        disabled_at: row.disabled_at,
        created_at: row.account_created_at,
        updated_at: row.updated_at,
      },
    };
  }

  /** Whether a session is still in force: not ended or expired, and its account neither disabled nor gone. */
  async sessionActive(id: string, now: number): Promise<boolean> {
    const row = await this.db.get(
      `SELECT 1 AS ok FROM auth_sessions s JOIN auth_accounts a ON a.user_id = s.user_id
       WHERE s.id = ? AND s.expires_at > ? AND a.disabled_at IS NULL`,
      [id, now],
    );
    return row !== undefined;
  }

  async insertSession(row: AuthSessionRow): Promise<void> {
    await this.db.run(
      "INSERT INTO auth_sessions (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      [row.id, row.user_id, row.secret_hash, row.created_at, row.expires_at],
    );
  }

  async extendSession(id: string, expiresAt: number): Promise<void> {
    await this.db.run("UPDATE auth_sessions SET expires_at = ? WHERE id = ?", [expiresAt, id]);
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.run("DELETE FROM auth_sessions WHERE id = ?", [id]);
  }

  async deleteSessionsOf(userId: string): Promise<void> {
    await this.db.run("DELETE FROM auth_sessions WHERE user_id = ?", [userId]);
  }

  async deleteExpiredSessions(now: number): Promise<void> {
    await this.db.run("DELETE FROM auth_sessions WHERE expires_at <= ?", [now]);
  }

  async insertInvite(row: {
    codeHash: string;
    admin: boolean;
    createdBy: string;
    createdAt: number;
    expiresAt: number;
  }): Promise<void> {
    await this.db.run(
      "INSERT INTO auth_invites (code_hash, admin, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      [row.codeHash, row.admin ? 1 : 0, row.createdBy, row.createdAt, row.expiresAt],
    );
  }

  /** Whether an invite is unused and unexpired (a cheap check before any password hashing). */
  async inviteUsable(codeHash: string, now: number): Promise<boolean> {
    const sql = "SELECT 1 AS ok FROM auth_invites WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?";
    return (await this.db.get<{ ok: number }>(sql, [codeHash, now])) !== undefined;
  }

  /**
   * Marks an unused, unexpired invite used by `userId` and returns it; undefined when there is none
   * (single use). One statement: two sign-ups racing for one invite cannot both redeem it.
   */
  redeemInvite(
    codeHash: string,
    userId: string,
    now: number,
    q: Queryable = this.db,
  ): Promise<InviteRow | undefined> {
    return q.get<InviteRow>(
      `UPDATE auth_invites SET used_by = ?, used_at = ?
       WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING *`,
      [userId, now, codeHash, now],
    );
  }
}
