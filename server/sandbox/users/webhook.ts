/**
 * Verifying and reading the sandbox provider's lifecycle webhooks (`POST /api/webhooks/sandbox`).
 *
 * `x-sandbox-signature` is the HMAC-SHA256 of the raw body under `SANDBOX_WEBHOOK_SECRET`, in hex
 * (optionally `sha256=`-prefixed); it is compared in constant time (on digests, so lengths leak
 * nothing). Every signed body must carry a `timestamp` (seconds or milliseconds since the epoch, or an
 * ISO date) within 5 minutes of now, and a body seen before in the last 10 minutes is refused: a
 * captured request cannot be played back later. The bodies seen are kept in the database
 * (`sandbox_webhook_seen`), so a body played back to another instance on the same database is refused
 * too. A body without a timestamp is refused too: the replay
 * memory alone would let it be played back once its 10 minutes (or the server's restart) had passed.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../lib/clock.ts";
import type { Db } from "../../storage/db/port.ts";
import type { SandboxState } from "./registry.ts";

/** Largest webhook body read; lifecycle events are a few hundred bytes. */
export const MAX_WEBHOOK_BYTES = 64 * 1024;
const TIMESTAMP_SKEW_MS = 5 * 60 * 1000;
const REPLAY_MEMORY_MS = 10 * 60 * 1000;

export function signatureOf(raw: string, secret: string): string {
  return createHmac("sha256", secret).update(raw).digest("hex");
}

export function signatureValid(raw: string, header: string | null, secret: string | undefined): boolean {
  if (!secret || !header) return false;
  const presented = header
    .trim()
    .replace(/^sha256=/i, "")
    .toLowerCase();
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(presented), digest(signatureOf(raw, secret)));
}

/** Remembers signed bodies for the replay window, in the database every instance shares. */
export class ReplayGuard {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = Date.now,
  ) {}

  /** Why the body must be ignored as a replay, or undefined when it is fresh (and now remembered). */
  async check(raw: string, payload: Record<string, unknown>): Promise<string | undefined> {
    const now = this.clock();
    const stamp = timestampOf(payload.timestamp);
    if (stamp === undefined) return "no timestamp";
    if (Math.abs(now - stamp) > TIMESTAMP_SKEW_MS) return "timestamp outside the window";
    const digest = createHash("sha256").update(raw).digest("hex");
    await this.db.run("DELETE FROM sandbox_webhook_seen WHERE expires_at <= ?", [now]);
    // One statement decides: of two instances given the same body at once, one inserts, the other sees 0.
    const { changes } = await this.db.run(
      "INSERT INTO sandbox_webhook_seen (digest, expires_at) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
      [digest, now + REPLAY_MEMORY_MS],
    );
    return changes === 0 ? "replayed" : undefined;
  }
}

function timestampOf(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value < 1e12 ? value * 1000 : value;
  if (typeof value === "string") {
    const parsed = Date.parse(value);
    return Number.isNaN(parsed) ? undefined : parsed;
  }
  return undefined;
}

/** The lifecycle state an event reports (`start`, `sandbox.started`, ...), or undefined for others. */
export function stateOfEvent(event: unknown): SandboxState | undefined {
  if (typeof event !== "string") return undefined;
  const name = event.toLowerCase().replace(/^sandbox[._]/, "");
  const states: Record<string, SandboxState> = {
    start: "started",
    started: "started",
    stop: "stopped",
    stopped: "stopped",
    archive: "archived",
    archived: "archived",
    delete: "deleted",
    deleted: "deleted",
  };
  return Object.hasOwn(states, name) ? states[name] : undefined;
}
