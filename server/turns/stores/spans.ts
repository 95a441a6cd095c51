/** SQL for tracing spans (runtime/tracing.ts): written in batches, read back per owner and trace. */
import type { Store } from "../../storage/store.ts";

/** One span as written: id, owner, trace, parent, run, name, start, duration, status, attributes. */
export type SpanRow = [
  id: string,
  owner: string,
  traceId: string,
  parentId: string | null,
  runId: string | null,
  name: string,
  startedAt: string,
  durationMs: number,
  status: string,
  attributesJson: string,
];

export class TurnSpanStore {
  constructor(private readonly store: Store) {}

  /** Writes the rows in one transaction. */
  insert(rows: SpanRow[]): void {
    this.store.tx(() => {
      for (const row of rows) {
        this.store.run(
          `INSERT INTO turn_spans (id, owner_id, trace_id, parent_id, run_id, name, started_at, duration_ms, status, attributes_json)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          row,
        );
      }
    });
  }

  list(owner: string, traceId: string) {
    return this.store.all<{ name: string; status: string; attributes_json: string; run_id: string | null }>(
      "SELECT name, status, attributes_json, run_id FROM turn_spans WHERE owner_id = ? AND trace_id = ? ORDER BY started_at, rowid",
      [owner, traceId],
    );
  }
}
