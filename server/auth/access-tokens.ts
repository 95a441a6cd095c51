/**
 * Personal access tokens (docs/auth.md#personal-access-tokens): what a script, a tool
 * on another machine or an MCP client uses instead of a browser session.
 *
 * A token is `atr_<id>_<secret>`: the prefix makes a leaked one recognisable (secret scanners, logs),
 * the id (120 random bits) finds the row, and only SHA-256 of the secret (160 random bits) is stored and
 * compared in constant time, as for sessions (tokens.ts). It is shown once, at creation. It carries the
 * scopes its owner chose (scopes.ts) and an optional expiry; it never acts as an admin (policy edits and
 * invites want a signed-in admin) and cannot manage tokens itself, so a narrow token cannot mint a
 * wider one. Revoking deletes the row: the next request with it is 401, and open connections on it end
 * within a second (live-connections.ts), at once when this process revoked it.
 * Plain service: no Elysia context; the routes, the resolver and `atrium user token` call it.
 */
import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase32LowerCaseNoPadding } from "@oslojs/encoding";
import { AppError } from "../http/errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { Db } from "../storage/db/port.ts";
import type { BearerGuesses } from "./bearer-guesses.ts";
import { bearerOf } from "./cookies.ts";
import type { CredentialResolver, Identity } from "./identity.ts";
import { isScope, SCOPES, type Scope } from "./scopes.ts";
import { AccessTokenStore, type TokenListRow } from "./token-store.ts";
import { randomPart } from "./tokens.ts";

/** What an access token looks like: anything else is not looked up. */
export const ACCESS_TOKEN_PATTERN = /^atr_([a-z2-7]{24})_([a-z2-7]{32})$/;
const DAY = 86_400_000;
/** `last_used_at` is written at most this often per token (a write per request would be wasted). */
const TOUCH_EVERY_MS = 60_000;
export const MAX_TOKEN_DAYS = 365;

export interface AccessTokenView {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  /** null: the token does not expire. */
  expiresAt: string | null;
  expired: boolean;
}

export interface NewAccessToken {
  name: string;
  scopes: readonly string[];
  expiresInDays?: number;
}

export class AccessTokens {
  readonly store: AccessTokenStore;
  private readonly clock: Clock;
  private readonly revokedListeners: (() => void)[] = [];

  constructor(db: Db, clock: Clock = Date.now) {
    this.store = new AccessTokenStore(db);
    this.clock = clock;
  }

  /** A new token of `owner`: the view plus the token itself, which is never shown again. */
  async create(owner: string, input: NewAccessToken): Promise<AccessTokenView & { token: string }> {
    const name = input.name.trim();
    if (!name || name.length > 100)
      throw new AppError("invalid", "A token needs a name of 1 to 100 characters");
    const scopes = [...new Set(input.scopes)];
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length > 0 || scopes.length === 0)
      throw new AppError(
        "invalid",
        `${unknown.length ? `Unknown scope '${unknown[0]}'. ` : ""}Scopes are ${SCOPES.join(", ")}`,
      );
    const days = input.expiresInDays;
    if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS))
      throw new AppError("invalid", `expiresInDays must be a whole number of days, 1 to ${MAX_TOKEN_DAYS}`);
    const id = randomPart();
    const secret = encodeBase32LowerCaseNoPadding(crypto.getRandomValues(new Uint8Array(20)));
    const now = this.clock();
    const row = {
      id,
      owner_id: owner,
      name,
      scopes: SCOPES.filter((s) => scopes.includes(s)).join(" "),
      secret_hash: hash(secret),
      created_at: now,
      last_used_at: null,
      expires_at: days === undefined ? null : now + days * DAY,
    };
    await this.store.insert(row);
    return { token: `atr_${id}_${secret}`, ...this.view(row) };
  }

  async list(owner: string): Promise<AccessTokenView[]> {
    return (await this.store.listOf(owner)).map((row) => this.view(row));
  }

  /** Revokes an owner's token: 404 when the owner has none of that id (another owner's included). */
  async revoke(owner: string, id: string): Promise<void> {
    if (!(await this.store.delete(owner, id))) throw new AppError("not_found", "No such token");
    for (const listener of this.revokedListeners) listener();
  }

  /** Called after this process revokes a token, so open connections on it end now. */
  onRevoked(listener: () => void): void {
    this.revokedListeners.push(listener);
  }

  /**
   * The identity a token stands for, or undefined (malformed, unknown, wrong secret, expired, disabled):
   * one read, and a write at most once a minute per token (`last_used_at`).
   */
  async validate(token: string): Promise<Identity | undefined> {
    const match = ACCESS_TOKEN_PATTERN.exec(token);
    if (!match) return undefined;
    const now = this.clock();
    const row = await this.store.inForce(match[1] as string, now);
    if (!row) return undefined;
    const presented = hash(match[2] as string);
    if (presented.length !== row.secret_hash.length || !constantTimeEqual(presented, row.secret_hash))
      return undefined;
    if (row.last_used_at === null || now - row.last_used_at >= TOUCH_EVERY_MS)
      await this.store.touch(row.id, now);
    return {
      id: row.owner_id,
      kind: "token",
      token: row.id,
      scopes: row.scopes.split(" ").filter(isScope),
      credential: "header",
    };
  }

  /** Whether the token an identity came with is still in force. */
  async stillInForce(tokenId: string | undefined): Promise<boolean> {
    return tokenId !== undefined && (await this.store.stillInForce(tokenId, this.clock()));
  }

  private view(row: TokenListRow): AccessTokenView {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return {
      id: row.id,
      name: row.name,
      scopes: row.scopes.split(" ").filter(isScope),
      createdAt: new Date(row.created_at).toISOString(),
      lastUsedAt: iso(row.last_used_at),
      expiresAt: iso(row.expires_at),
      expired: row.expires_at !== null && row.expires_at <= this.clock(),
    };
  }
}

function hash(secret: string): Uint8Array {
  return sha256(new TextEncoder().encode(secret));
}

/**
 * The credential resolver of access tokens: `Authorization: Bearer atr_…` (a WebSocket's `auth_token`
 * arrives the same way). A bad one counts against the address's sign-in limit (bearer-guesses.ts).
 */
export function accessTokenResolver(tokens: AccessTokens, guesses: BearerGuesses): CredentialResolver {
  return (request, client) => {
    const bearer = bearerOf(request);
    if (!bearer?.startsWith("atr_")) return undefined;
    return guesses.check(client.address, () => tokens.validate(bearer));
  };
}
