/**
 * Long-lived connections end when their credential does. A WebSocket (`/v1/chat`) or a response stream
 * (SSE: turns, `/api/attach`, search; NDJSON: chat turns) was authorised once, when it opened; if the
 * account is disabled or deleted, the session signed out or reset, or the access token revoked or
 * expired, afterwards, it must not keep receiving (or acting) for minutes or hours.
 *
 * How the server learns of it: the change is a database write, made by this process (sign-out) or by
 * another one on the same data dir (`atrium user disable|delete|reset-password` runs as its own process,
 * and later instances share the database). So while any connection is held, every second each distinct
 * credential is checked against the database (one indexed query per session or token), the same interval the
 * per-user sandboxes use to notice a deleted user; a revocation made in this process is checked at once.
 * A connection whose credential is gone is ended: sockets close with 4401, streams end (their producer
 * is cancelled as on a client disconnect). Nothing is polled while nothing is held.
 */
import type { Identity } from "./identity.ts";

/** How often held credentials are checked while any connection is open. */
export const RECHECK_MS = 1000;

interface Held {
  identity: Identity;
  end: () => void;
}

export class LiveConnections {
  private readonly held = new Set<Held>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private round: Promise<void> | undefined;
  private again: Promise<void> | undefined;

  constructor(
    /** Whether the credential is still good (session-auth: the session and its account still valid). */
    private readonly stillValid: (identity: Identity) => boolean | Promise<boolean>,
    private readonly intervalMs = RECHECK_MS,
  ) {}

  /** Holds a connection of `identity`; `end` is called once if the credential is revoked. Returns the release. */
  hold(identity: Identity, end: () => void): () => void {
    const entry: Held = { identity, end };
    this.held.add(entry);
    this.timer ??= setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref?.();
    return () => this.release(entry);
  }

  /** How many connections are held (tests, diagnostics). */
  get size(): number {
    return this.held.size;
  }

  /**
   * Checks every held credential now and ends the connections of revoked ones. One round at a time: a
   * call during a round runs one more round after it (a revocation may have landed after its reads).
   */
  check(): Promise<void> {
    if (this.round) {
      this.again ??= this.round.then(() => {
        this.again = undefined;
        return this.check();
      });
      return this.again;
    }
    this.round = this.checkRound().finally(() => {
      this.round = undefined;
    });
    return this.round;
  }

  private async checkRound(): Promise<void> {
    const verdicts = new Map<string, boolean>();
    for (const entry of [...this.held]) {
      const { kind, id, session, token } = entry.identity;
      const key = `${kind}\u0000${id}\u0000${session ?? token ?? ""}`;
      let valid = verdicts.get(key);
      if (valid === undefined) {
        try {
          valid = await this.stillValid(entry.identity);
        } catch {
          valid = true; // a database hiccup is not a revocation; the next round asks again
        }
        verdicts.set(key, valid);
      }
      if (valid || !this.held.has(entry)) continue;
      this.release(entry);
      try {
        entry.end();
      } catch {
        // already closed
      }
    }
  }

  /**
   * A response stream (SSE, NDJSON) that ends when the credential is revoked: its body is passed through
   * unchanged and, on revocation, the source is cancelled (its producer stops, as on a disconnect) and
   * the client sees the stream end. Other responses are returned as they are.
   */
  holdStream(response: Response, identity: Identity): Response {
    const source = response.body;
    if (!source || !isStream(response.headers.get("content-type"))) return response;
    const reader = source.getReader();
    let release: (() => void) | undefined;
    let done = false;
    const finish = () => {
      done = true;
      release?.();
    };
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          release = this.hold(identity, () => {
            if (done) return;
            finish();
            reader.cancel("credential revoked").catch(() => {});
            controller.close();
          });
        },
        pull: async (controller) => {
          const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
          if (done) return;
          if (next.done) {
            finish();
            controller.close();
          } else controller.enqueue(next.value);
        },
        cancel: (reason) => {
          finish();
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, headers: response.headers });
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.held.clear();
  }

  private release(entry: Held): void {
    this.held.delete(entry);
    if (this.held.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function isStream(contentType: string | null): boolean {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  return type === "text/event-stream" || type === "application/x-ndjson";
}
