/**
 * SQL for runs (turns) and their event log. Queries a request reaches are scoped by owner: a row of
 * another owner is never returned (the services answer 404). The run's own writes (events, commit) go
 * by run id, which only the run's executor holds.
 */
import { isoNow } from "../../lib/clock.ts";
import type { Store } from "../../storage/store.ts";
import type { TurnEvent } from "../runtime/events.ts";

export interface RunRow {
  id: string;
  owner_id: string;
  session_id: string;
  idempotency_key: string;
  fingerprint: string;
  input_json: string;
  status: "running" | "completed" | "failed" | "cancelled";
  committed: number;
  cancel_requested: number;
  parts_json: string | null;
  usage_json: string | null;
  error_code: string | null;
  error_message: string | null;
  trace_id: string | null;
  duration_ms: number | null;
  created_at: string;
  finished_at: string | null;
}

export class TurnRunStore {
  constructor(private readonly store: Store) {}

  tx<T>(fn: () => T): T {
    return this.store.tx(fn);
  }

  byKey(owner: string, sessionId: string, key: string): RunRow | undefined {
    return this.store.get<RunRow>(
      "SELECT * FROM turn_runs WHERE session_id = ? AND idempotency_key = ? AND owner_id = ?",
      [sessionId, key, owner],
    );
  }

  /** The owner's runs under one Idempotency-Key in any session, newest first. */
  allByKey(owner: string, key: string, limit: number): RunRow[] {
    return this.store.all<RunRow>(
      "SELECT * FROM turn_runs WHERE owner_id = ? AND idempotency_key = ? ORDER BY created_at DESC, id LIMIT ?",
      [owner, key, limit],
    );
  }

  get(owner: string, id: string): RunRow | undefined {
    return this.store.get<RunRow>("SELECT * FROM turn_runs WHERE id = ? AND owner_id = ?", [id, owner]);
  }

  /** Claims the session for a new run; false when another run holds it (the partial unique index). */
  claim(
    row: Pick<RunRow, "id" | "owner_id" | "session_id" | "idempotency_key" | "fingerprint" | "input_json">,
  ) {
    try {
      this.store.run(
        `INSERT INTO turn_runs (id, owner_id, session_id, idempotency_key, fingerprint, input_json, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?)`,
        [
          row.id,
          row.owner_id,
          row.session_id,
          row.idempotency_key,
          row.fingerprint,
          row.input_json,
          isoNow(),
        ],
      );
      return true;
    } catch (error) {
      if (String((error as Error).message).includes("UNIQUE")) return false;
      throw error;
    }
  }

  setTraceId(runId: string, traceId: string) {
    this.store.run("UPDATE turn_runs SET trace_id = ? WHERE id = ?", [traceId, runId]);
  }

  appendEvent(run: RunRow | { id: string; owner_id: string }, seq: number, event: TurnEvent) {
    this.store.run("INSERT INTO turn_events (run_id, owner_id, seq, type, payload) VALUES (?, ?, ?, ?, ?)", [
      run.id,
      run.owner_id,
      seq,
      event.type,
      JSON.stringify(event),
    ]);
  }

  events(runId: string): TurnEvent[] {
    return this.store
      .all<{ payload: string }>("SELECT payload FROM turn_events WHERE run_id = ? ORDER BY seq", [runId])
      .map((r) => JSON.parse(r.payload) as TurnEvent);
  }

  requestCancel(runId: string) {
    this.store.run("UPDATE turn_runs SET cancel_requested = 1 WHERE id = ?", [runId]);
  }

  /** Writes a run's outcome and history parts in one statement: a run is committed once, never after. */
  commit(
    runId: string,
    outcome: {
      status: "completed" | "failed" | "cancelled";
      parts: unknown[];
      usage: unknown;
      errorCode?: string;
      errorMessage?: string;
      durationMs: number;
    },
  ): boolean {
    const result = this.store.run(
      `UPDATE turn_runs SET status = ?, committed = 1, parts_json = ?, usage_json = ?, error_code = ?, error_message = ?,
         duration_ms = ?, finished_at = ? WHERE id = ? AND committed = 0`,
      [
        outcome.status,
        JSON.stringify(outcome.parts),
        JSON.stringify(outcome.usage),
        outcome.errorCode ?? null,
        outcome.errorMessage ?? null,
        outcome.durationMs,
        isoNow(),
        runId,
      ],
    );
    return result.changes === 1;
  }

  committed(owner: string, sessionId: string, limit: number, offset: number): RunRow[] {
    return this.store.all<RunRow>(
      "SELECT * FROM turn_runs WHERE session_id = ? AND owner_id = ? AND committed = 1 ORDER BY created_at, rowid LIMIT ? OFFSET ?",
      [sessionId, owner, limit, offset],
    );
  }

  /** After a crash: runs left running never finished; they become failed, with no partial history. */
  failInterrupted(): number {
    const parts = JSON.stringify([
      {
        type: "data-status",
        data: { phase: "execution", status: "failed", message: "The server stopped during this turn" },
      },
    ]);
    return this.store.run(
      `UPDATE turn_runs SET status = 'failed', committed = 1, parts_json = ?, usage_json = 'null',
         error_code = 'interrupted', error_message = 'The server stopped during this turn', finished_at = ?
       WHERE status = 'running'`,
      [parts, isoNow()],
    ).changes;
  }
}
