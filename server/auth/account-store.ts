/**
 * The SQL of session auth: accounts (a `users` row plus email, password hash, admin and disabled
 * flags), sessions and invites. Emails are stored lower-cased and trimmed, so lookups are exact.
 */
import type { Store } from "../storage/store.ts";

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

export class AccountStore {
  constructor(private readonly store: Store) {}

  /** Runs `fn` in one transaction (sign-up with an invite: the account and the redeemed invite). */
  tx<T>(fn: () => T): T {
    return this.store.tx(fn);
  }

  byEmail(email: string): AccountRow | undefined {
    return this.store.get<AccountRow>(`${ACCOUNT} WHERE a.email = ?`, [email]);
  }

  byId(userId: string): AccountRow | undefined {
    return this.store.get<AccountRow>(`${ACCOUNT} WHERE a.user_id = ?`, [userId]);
  }

  list(): AccountRow[] {
    return this.store.all<AccountRow>(`${ACCOUNT} ORDER BY a.created_at, a.email`);
  }

  count(): number {
    return this.store.get<{ n: number }>("SELECT count(*) AS n FROM auth_accounts")?.n ?? 0;
  }

  insert(account: { userId: string; email: string; name: string; passwordHash: string; admin: boolean }) {
    this.store.tx(() => {
      this.store.run("INSERT INTO users (id, display_name) VALUES (?, ?)", [account.userId, account.name]);
      this.store.run("INSERT INTO auth_accounts (user_id, email, password_hash, admin) VALUES (?, ?, ?, ?)", [
        account.userId,
        account.email,
        account.passwordHash,
        account.admin ? 1 : 0,
      ]);
    });
  }

  update(userId: string, changes: { passwordHash?: string; admin?: boolean; disabled?: boolean }): boolean {
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
    if (changes.disabled !== undefined) {
      sets.push(
        changes.disabled ? "disabled_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')" : "disabled_at = NULL",
      );
    }
    if (sets.length === 0) return false;
    sets.push("updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");
    const sql = `UPDATE auth_accounts SET ${sets.join(", ")} WHERE user_id = ?`;
    return this.store.run(sql, [...params, userId]).changes > 0;
  }

  session(id: string): AuthSessionRow | undefined {
    return this.store.get<AuthSessionRow>("SELECT * FROM auth_sessions WHERE id = ?", [id]);
  }

  /** Whether a session is still in force: not ended or expired, and its account neither disabled nor gone. */
  sessionActive(id: string, now: number): boolean {
    return (
      this.store.get(
        `SELECT 1 AS ok FROM auth_sessions s JOIN auth_accounts a ON a.user_id = s.user_id
         WHERE s.id = ? AND s.expires_at > ? AND a.disabled_at IS NULL`,
        [id, now],
      ) !== undefined
    );
  }

  insertSession(row: AuthSessionRow): void {
    this.store.run(
      "INSERT INTO auth_sessions (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      [row.id, row.user_id, row.secret_hash, row.created_at, row.expires_at],
    );
  }

  extendSession(id: string, expiresAt: number): void {
    this.store.run("UPDATE auth_sessions SET expires_at = ? WHERE id = ?", [expiresAt, id]);
  }

  deleteSession(id: string): void {
    this.store.run("DELETE FROM auth_sessions WHERE id = ?", [id]);
  }

  deleteSessionsOf(userId: string): void {
    this.store.run("DELETE FROM auth_sessions WHERE user_id = ?", [userId]);
  }

  deleteExpiredSessions(now: number): void {
    this.store.run("DELETE FROM auth_sessions WHERE expires_at <= ?", [now]);
  }

  insertInvite(row: {
    codeHash: string;
    admin: boolean;
    createdBy: string;
    createdAt: number;
    expiresAt: number;
  }) {
    this.store.run(
      "INSERT INTO auth_invites (code_hash, admin, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      [row.codeHash, row.admin ? 1 : 0, row.createdBy, row.createdAt, row.expiresAt],
    );
  }

  /** Whether an invite is unused and unexpired (a cheap check before any password hashing). */
  inviteUsable(codeHash: string, now: number): boolean {
    const sql = "SELECT 1 AS ok FROM auth_invites WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?";
    return this.store.get<{ ok: number }>(sql, [codeHash, now]) !== undefined;
  }

  /** Marks an unused, unexpired invite used by `userId`; false when there is none (single use). */
  redeemInvite(codeHash: string, userId: string, now: number): InviteRow | undefined {
    const invite = this.store.get<InviteRow>(
      "SELECT * FROM auth_invites WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
      [codeHash, now],
    );
    if (!invite) return undefined;
    const { changes } = this.store.run(
      "UPDATE auth_invites SET used_by = ?, used_at = ? WHERE code_hash = ? AND used_at IS NULL",
      [userId, now, codeHash],
    );
    return changes === 1 ? invite : undefined;
  }
}
