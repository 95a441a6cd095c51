/**
 * Session auth (`APP_AUTH_SECRET`): accounts with argon2id passwords (`Bun.password`, through the
 * process's password queue), sign-up by the operator's sign-up mode (open, invite, closed), sign-in with
 * limits per client address and per account (counted in the database, reserved before the hash),
 * Lucia-style sessions with sliding expiry. (The secret's HMAC keys, CSRF tokens and preview URLs, are
 * derived in server-keys.ts.)
 * Plain service: no Elysia context; the routes and the credential resolver call it.
 *
 * Errors never say whether an account exists: an unknown email, a wrong password and a disabled account
 * are the same 401, and the unknown email still pays for one password verification.
 */
import { AppError } from "../http/errors.ts";
import type { Clock } from "../lib/clock.ts";
import { isUniqueViolation } from "../storage/db/dialect.ts";
import type { Db } from "../storage/db/port.ts";
import { type AccountRow, AccountStore } from "./account-store.ts";
import { LimitStore } from "./limit-store.ts";
import { PasswordQueue } from "./password-queue.ts";
import { SlidingWindow } from "./rate-limit.ts";
import { hashCode, newSessionToken, randomPart, secretMatches, splitToken } from "./tokens.ts";

export const SIGNUP_MODES = ["open", "invite", "closed"] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

const DAY = 24 * 60 * 60 * 1000;
/** A session lives 30 days from its last use, renewed when less than half of that is left. */
export const SESSION_LIFETIME_MS = 30 * DAY;
const INVITE_LIFETIME_MS = 7 * DAY;
const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Sign-in attempts per client address, and per account (existing or not), per 15 minutes. */
export const SIGN_IN_LIMITS = { perAddress: 20, perAccount: 5, windowMs: SIGN_IN_WINDOW_MS } as const;
export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 256;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;

export interface UserView {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  admin: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SessionView {
  id: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
}

export interface Signed {
  token: string;
  session: SessionView;
  user: UserView;
}

export interface Validated {
  session: SessionView;
  user: UserView;
  /** The expiry moved forward on this use (the cookie should be set again). */
  renewed: boolean;
}

export interface SessionAuthOptions {
  /** The database port: app.db or PostgreSQL. */
  db: Db;
  /** `APP_AUTH_SECRET`: session auth exists only with it (its HMAC keys: server-keys.ts). */
  secret: string;
  signup: SignupMode;
  clock?: Clock;
  /** The attempt counters (default: over `db`). */
  limits?: LimitStore;
  /** The process's password queue (default: a queue of its own). */
  passwords?: PasswordQueue;
}

const failedSignUp = () =>
  new AppError("invalid", "Sign-up failed: check the invite code, or sign in if you have an account");
const invalidCredentials = () => new AppError("unauthorized", "Invalid email or password");

export class SessionAuth {
  readonly accounts: AccountStore;
  readonly signup: SignupMode;
  readonly passwords: PasswordQueue;
  private readonly clock: Clock;
  private readonly limits: LimitStore;
  private readonly perAddress: SlidingWindow;
  private readonly perAccount: SlidingWindow;
  private dummyHash: Promise<string> | undefined;
  private readonly revokedListeners: (() => void)[] = [];

  constructor(options: SessionAuthOptions) {
    this.accounts = new AccountStore(options.db);
    this.signup = options.signup;
    this.clock = options.clock ?? Date.now;
    this.passwords = options.passwords ?? new PasswordQueue();
    this.limits = options.limits ?? new LimitStore(options.db, this.clock);
    const { perAddress, perAccount, windowMs } = SIGN_IN_LIMITS;
    this.perAddress = new SlidingWindow("signin-address", perAddress, windowMs, this.limits);
    this.perAccount = new SlidingWindow("signin-account", perAccount, windowMs, this.limits);
  }

  /** Creates an account (the CLI and sign-up); the first account ever created is an admin. */
  async createAccount(input: {
    email: string;
    password: string;
    name?: string;
    admin?: boolean;
  }): Promise<UserView> {
    const email = normalEmail(input.email);
    checkPassword(input.password);
    const passwordHash = await this.passwords.hash(input.password);
    const userId = `u_${randomPart()}`;
    const admin = input.admin === true || (await this.accounts.count()) === 0;
    try {
      await this.accounts.insert({
        userId,
        email,
        name: displayName(input.name, email),
        passwordHash,
        admin,
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError("conflict", "An account with this email already exists");
      throw error;
    }
    return view((await this.accounts.byId(userId)) as AccountRow);
  }

  async signUp(input: {
    email: string;
    password: string;
    name?: string;
    inviteCode?: string;
  }): Promise<Signed> {
    if (this.signup === "closed")
      throw new AppError("forbidden", "Sign-up is closed on this server; ask an admin");
    const email = normalEmail(input.email);
    checkPassword(input.password);
    const now = this.clock();
    const code = input.inviteCode?.trim();
    if (this.signup === "invite" && !code)
      throw new AppError("forbidden", "Sign-up needs an invite code on this server");
    // Refused before the (deliberately slow) password hash: anonymous callers cannot make it spend CPU.
    if (this.signup === "invite" && code && !(await this.accounts.inviteUsable(hashCode(code), now)))
      throw failedSignUp();
    const passwordHash = await this.passwords.hash(input.password);
    const userId = `u_${randomPart()}`;
    try {
      await this.accounts.db.tx(async (tx) => {
        const name = displayName(input.name, email);
        await this.accounts.insert({ userId, email, name, passwordHash, admin: false }, tx);
        if (this.signup !== "invite" || !code) return;
        // The account row exists before the invite names it; the transaction undoes both on failure.
        const invite = await this.accounts.redeemInvite(hashCode(code), userId, now, tx);
        if (!invite) throw failedSignUp();
        if (invite.admin === 1) await this.accounts.update(userId, { admin: true }, tx);
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (isUniqueViolation(error)) throw failedSignUp();
      throw error;
    }
    return this.startSession(userId);
  }

  async signIn(
    input: { email: string; password: string },
    clientAddress: string | undefined,
  ): Promise<Signed> {
    const email = typeof input.email === "string" ? input.email.trim().toLowerCase() : "";
    const account = await this.accounts.byEmail(email);
    const hash = account?.password_hash ?? (await this.dummy());
    // The queue's answer first (a full queue refuses before anything is counted), then the limits'
    // check and the reservation in one transaction, so parallel attempts cannot all pass a check that
    // only one of them should pass. A refused attempt is not counted; a taken one counts before the hash.
    if (!this.passwords.admits()) throw this.passwords.busy();
    const reserved = await this.limits.reserve([
      this.perAddress.of(clientAddress ?? "unknown"),
      this.perAccount.of(email),
    ]);
    if (!reserved.ok) {
      throw new AppError("rate_limited", "Too many sign-in attempts; try again later", {
        headers: { "retry-after": String(reserved.retryAfterSeconds) },
      });
    }
    let valid: boolean;
    try {
      valid = await this.passwords.verify(input.password, hash);
    } catch (error) {
      // The line filled while the reservation was written (503): an attempt that never ran is not counted.
      await this.limits.release(reserved.ids);
      throw error;
    }
    if (!account || !valid || account.disabled_at !== null) throw invalidCredentials();
    // A success is not a guess: its own address slot is given back and the account's failures forgotten.
    const [addressAttempt] = reserved.ids;
    if (addressAttempt !== undefined) await this.limits.release([addressAttempt]);
    await this.perAccount.reset(email);
    return this.startSession(account.user_id);
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= this.passwords.hash(randomPart());
    // A refused first attempt (a full queue) must not leave a rejected promise for every later one.
    this.dummyHash.catch(() => (this.dummyHash = undefined));
    return this.dummyHash;
  }

  async startSession(userId: string): Promise<Signed> {
    const { id, token, secretHash } = newSessionToken();
    const now = this.clock();
    await this.accounts.deleteExpiredSessions(now);
    const row = {
      id,
      user_id: userId,
      secret_hash: secretHash,
      created_at: now,
      expires_at: now + SESSION_LIFETIME_MS,
    };
    await this.accounts.insertSession(row);
    const account = (await this.accounts.byId(userId)) as AccountRow;
    return { token, session: sessionView(row), user: view(account) };
  }

  /**
   * The session and user a token stands for, or undefined; renews the expiry when it is half spent.
   * Every request of a signed-in browser makes this: one read (the session with its account), and a
   * write only on the rare renewal or expiry.
   */
  async validate(token: string): Promise<Validated | undefined> {
    const parts = splitToken(token);
    if (!parts) return undefined;
    const row = await this.accounts.sessionWithAccount(parts.id);
    if (!row || !secretMatches(parts.secret, row.secret_hash)) return undefined;
    const now = this.clock();
    if (row.expires_at <= now) {
      await this.accounts.deleteSession(row.id);
      return undefined;
    }
    const { account } = row;
    if (account.disabled_at !== null) return undefined;
    let renewed = false;
    if (row.expires_at - now < SESSION_LIFETIME_MS / 2) {
      row.expires_at = now + SESSION_LIFETIME_MS;
      await this.accounts.extendSession(row.id, row.expires_at);
      renewed = true;
    }
    return { session: sessionView(row), user: view(account), renewed };
  }

  /** Whether the session is still in force (live connections re-check this while they stay open). */
  async stillSignedIn(sessionId: string | undefined): Promise<boolean> {
    return sessionId !== undefined && (await this.accounts.sessionActive(sessionId, this.clock()));
  }

  /** Called after this process ends sessions (sign-out, reset, disable), so open connections end now. */
  onRevoked(listener: () => void): void {
    this.revokedListeners.push(listener);
  }

  private revoked(): void {
    for (const listener of this.revokedListeners) listener();
  }

  /** Ends the session a token stands for (a token that is not one is ignored). */
  async signOut(token: string | undefined): Promise<void> {
    if (!token) return;
    const parts = splitToken(token);
    const row = parts && (await this.accounts.session(parts.id));
    if (parts && row && secretMatches(parts.secret, row.secret_hash)) {
      await this.accounts.deleteSession(row.id);
      this.revoked();
    }
  }

  /** A single-use invite code (shown once; only its hash is stored). */
  async createInvite(createdBy: string, options: { admin?: boolean; lifetimeMs?: number } = {}) {
    const code = `inv_${randomPart()}${randomPart()}`;
    const now = this.clock();
    const expiresAt = now + (options.lifetimeMs ?? INVITE_LIFETIME_MS);
    await this.accounts.insertInvite({
      codeHash: hashCode(code),
      admin: options.admin === true,
      createdBy,
      createdAt: now,
      expiresAt,
    });
    return { code, expiresAt: new Date(expiresAt).toISOString(), admin: options.admin === true };
  }

  async setPassword(userId: string, password: string): Promise<void> {
    checkPassword(password);
    await this.accounts.update(userId, { passwordHash: await this.passwords.hash(password) });
    // A reset ends every session: whoever knew the old password is signed out.
    await this.accounts.deleteSessionsOf(userId);
    this.revoked();
  }

  async setDisabled(userId: string, disabled: boolean): Promise<void> {
    await this.accounts.update(userId, { disabled });
    if (!disabled) return;
    await this.accounts.deleteSessionsOf(userId);
    this.revoked();
  }
}

export function normalEmail(raw: unknown): string {
  const email = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  if (email.length > 254 || !EMAIL.test(email)) throw new AppError("invalid", "Enter a valid email address");
  return email;
}

function checkPassword(password: unknown): void {
  if (typeof password !== "string" || password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    throw new AppError("invalid", `Passwords have ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
  }
}

function displayName(name: string | undefined, email: string): string {
  const trimmed = name?.trim();
  return trimmed ? trimmed.slice(0, 100) : (email.split("@")[0] as string);
}

export function view(row: AccountRow): UserView {
  return {
    id: row.user_id,
    name: row.display_name,
    email: row.email,
    emailVerified: false,
    admin: row.admin === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function sessionView(row: {
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}): SessionView {
  return {
    id: row.id,
    userId: row.user_id,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
  };
}
