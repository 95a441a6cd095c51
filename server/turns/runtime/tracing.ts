/**
 * Local tracing: spans of a turn (the turn, each step, each tool call) written to SQLite with one traceId
 * per sampled turn. Span attributes are bounded by `tracing.trace_content_max_chars` and scrubbed of
 * secret values. With `exporter = "off"` nothing is recorded. Writes are batched off the event path when
 * `tracing.async_logging` is on.
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

  constructor(
    private readonly store: TurnSpanStore,
    private readonly settings: PolicySettings["tracing"],
    private readonly secrets: string[],
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

  spans(owner: string, traceId: string) {
    this.flush();
    return this.store.list(owner, traceId);
  }

  flush(): void {
    const rows = this.queue;
    this.queue = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    if (rows.length > 0) this.store.insert(rows);
  }

  /**
   * Writes what is buffered and takes no more: called once the family's turns settled, before the
   * database closes, so a span a late turn ends can never be written into a closed database.
   */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private write(row: SpanRow) {
    if (this.closed) return;
    this.queue.push(row);
    if (!this.settings.async_logging) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), 50);
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
