/**
 * Local tracing: spans of a turn (the turn, each step, each tool call) written to the database with one traceId
 * per sampled turn. Span attributes are bounded by `tracing.trace_content_max_chars` and scrubbed of
 * secret values. With `exporter = "off"` nothing is recorded. Writes are batched off the event path when
 * `tracing.async_logging` is on; the writes go one after another (a chain), so `spans()` and `close()` can
 * wait for every span ended before them.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { isoNow } from "../../lib/clock.ts";
import type { SpanRow, TurnSpanStore } from "../stores/spans.ts";

export interface Span {
  end(status?: "ok" | "error", attributes?: Record<string, unknown>): void;
}

const NOOP: Span = { end() {} };

export class TurnTracer {
  private queue: SpanRow[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** The writes in flight, in order; never rejects (a failed write is logged). */
  private written: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: TurnSpanStore,
    private readonly settings: PolicySettings["tracing"],
    private readonly secrets: string[],
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  get enabled(): boolean {
    return this.settings.exporter !== "off";
  }

  /** A traceId for a new turn, or null when tracing is off or the turn is not sampled. */
  newTrace(): string | null {
    if (!this.enabled || Math.random() >= this.settings.trace_sampling_ratio) return null;
    return crypto.randomUUID().replaceAll("-", "");
  }

  start(
    traceId: string | null,
    owner: string,
    name: string,
    runId: string | null,
    attributes: Record<string, unknown> = {},
  ): Span {
    if (!traceId) return NOOP;
    const id = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
    const startedAt = isoNow();
    const began = Date.now();
    return {
      end: (status = "ok", more = {}) => {
        this.write([
          id,
          owner,
          traceId,
          null,
          runId,
          name,
          startedAt,
          Date.now() - began,
          status,
          this.bounded({ ...attributes, ...more }),
        ]);
      },
    };
  }

  async spans(owner: string, traceId: string) {
    await this.flush();
    return this.store.list(owner, traceId);
  }

  /** Writes what is buffered; resolves once it (and every earlier write) is stored. */
  flush(): Promise<void> {
    const rows = this.queue;
    this.queue = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    if (rows.length > 0) this.written = this.written.then(() => this.store.insert(rows)).catch(this.onError);
    return this.written;
  }

  /**
   * Writes what is buffered and takes no more: called once the family's turns settled, before the
   * database closes, so a span a late turn ends can never be written into a closed database.
   */
  close(): Promise<void> {
    this.closed = true;
    return this.flush();
  }

  private write(row: SpanRow) {
    if (this.closed) return;
    this.queue.push(row);
    if (!this.settings.async_logging) {
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => void this.flush(), 50);
  }

  /** Each string bounded and scrubbed of every known secret value. */
  private bounded(attributes: Record<string, unknown>): string {
    const max = this.settings.trace_content_max_chars;
    let text = JSON.stringify(attributes, (_key, value) =>
      typeof value === "string" && value.length > max ? `${value.slice(0, max)}…` : value,
    );
    for (const secret of this.secrets) if (secret.length >= 4) text = text.replaceAll(secret, "[redacted]");
    return text;
  }
}
