/**
 * SQL for tracing spans (runtime/tracing.ts), over the database port: written in batches (one multi-row
 * INSERT each), read back per owner and trace.
 */
import type { Db, SqlValue } from "../../storage/db/port.ts";

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
  constructor(private readonly db: Db) {}

  /** Writes the rows in one transaction, up to 100 per statement. */
  async insert(rows: SpanRow[]): Promise<void> {
    await this.db.tx(async (tx) => {
      for (let i = 0; i < rows.length; i += 100) {
        const chunk = rows.slice(i, i + 100);
        await tx.run(
          `INSERT INTO turn_spans (id, owner_id, trace_id, parent_id, run_id, name, started_at, duration_ms, status, attributes_json)
           VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
          chunk.flat() as SqlValue[],
        );
      }
    });
  }

  list(owner: string, traceId: string) {
    return this.db.all<{ name: string; status: string; attributes_json: string; run_id: string | null }>(
      "SELECT name, status, attributes_json, run_id FROM turn_spans WHERE owner_id = ? AND trace_id = ? ORDER BY started_at, rowid",
      [owner, traceId],
    );
  }
}
