/**
 * SQL for runs (turns) and their event log, over the database port (either engine). Queries a request
 * reaches are scoped by owner: a row of another owner is never returned (the services answer 404). The
 * run's own writes (events, commit) go by run id, which only the run's executor holds; those that belong
 * to a transaction take its handle (`q`).
 */
import { isoNow } from "../../lib/clock.ts";
import type { Db, Queryable, SqlValue, Tx } from "../../storage/db/port.ts";
import type { TurnEvent } from "../runtime/events.ts";

export interface RunRow {
  id: string;
  owner_id: string;
  session_id: string;
  idempotency_key: string;
  fingerprint: string;
  input_json: string;
  /** The root model the request named (`provider/model`); null: the policy's. */
  model: string | null;
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

/** One row of the event log: the run's sequence number and the (compacted) event. */
export interface EventRow {
  seq: number;
  event: TurnEvent;
}

const COLUMNS = `id, owner_id, session_id, idempotency_key, fingerprint, input_json, model, status, committed,
  cancel_requested, parts_json, usage_json, error_code, error_message, trace_id, duration_ms, created_at, finished_at`;

const INTERRUPTED = "The server stopped during this turn";
const INTERRUPTED_PARTS = JSON.stringify([
  { type: "data-status", data: { phase: "execution", status: "failed", message: INTERRUPTED } },
]);

/** Rows per INSERT of the event log (5 parameters each: far below either engine's parameter limit). */
const EVENT_ROWS_PER_STATEMENT = 200;

export class TurnRunStore {
  constructor(private readonly db: Db) {}

  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.tx(fn);
  }

  byKey(owner: string, sessionId: string, key: string): Promise<RunRow | undefined> {
    return this.db.get<RunRow>(
      `SELECT ${COLUMNS} FROM turn_runs WHERE session_id = ? AND idempotency_key = ? AND owner_id = ?`,
      [sessionId, key, owner],
    );
  }

  /** The owner's runs under one Idempotency-Key in any session, newest first. */
  allByKey(owner: string, key: string, limit: number): Promise<RunRow[]> {
    return this.db.all<RunRow>(
      `SELECT ${COLUMNS} FROM turn_runs WHERE owner_id = ? AND idempotency_key = ? ORDER BY created_at DESC, id LIMIT ?`,
      [owner, key, limit],
    );
  }

  get(owner: string, id: string): Promise<RunRow | undefined> {
    return this.db.get<RunRow>(`SELECT ${COLUMNS} FROM turn_runs WHERE id = ? AND owner_id = ?`, [id, owner]);
  }

  /**
   * Claims the session for a new run; false when another run holds it or the key is taken. One statement
   * whichever engine: the unique constraints (one running run per session, one run per key) decide, so
   * two first attempts racing on PostgreSQL's side-by-side connections cannot both win.
   */
  async claim(
    row: Pick<RunRow, "id" | "owner_id" | "session_id" | "idempotency_key" | "fingerprint" | "input_json"> & {
      model?: string | null;
    },
  ): Promise<boolean> {
    const { changes } = await this.db.run(
      `INSERT INTO turn_runs (id, owner_id, session_id, idempotency_key, fingerprint, input_json, model, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?) ON CONFLICT DO NOTHING`,
      [
        row.id,
        row.owner_id,
        row.session_id,
        row.idempotency_key,
        row.fingerprint,
        row.input_json,
        row.model ?? null,
        isoNow(),
      ],
    );
    return changes === 1;
  }

  async setTraceId(runId: string, traceId: string): Promise<void> {
    await this.db.run("UPDATE turn_runs SET trace_id = ? WHERE id = ?", [traceId, runId]);
  }

  /** Appends events to a run's log, a multi-row INSERT per batch (one round trip for up to 200 events). */
  async appendEvents(
    run: { id: string; owner_id: string },
    rows: readonly EventRow[],
    q: Queryable = this.db,
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += EVENT_ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + EVENT_ROWS_PER_STATEMENT);
      const params: SqlValue[] = [];
      for (const { seq, event } of chunk)
        params.push(run.id, run.owner_id, seq, event.type, JSON.stringify(event));
      await q.run(
        `INSERT INTO turn_events (run_id, owner_id, seq, type, payload) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        params,
      );
    }
  }

  async events(runId: string): Promise<TurnEvent[]> {
    const rows = await this.db.all<{ payload: string }>(
      "SELECT payload FROM turn_events WHERE run_id = ? ORDER BY seq",
      [runId],
    );
    return rows.map((r) => JSON.parse(r.payload) as TurnEvent);
  }

  /** A run by id alone: a follower on another instance, whose owner check was its key lookup. */
  byId(runId: string): Promise<RunRow | undefined> {
    return this.db.get<RunRow>(`SELECT ${COLUMNS} FROM turn_runs WHERE id = ?`, [runId]);
  }

  /** The run's logged events from sequence number `from` on, in order (a follower's next read). */
  async eventsFrom(runId: string, from: number): Promise<EventRow[]> {
    const rows = await this.db.all<{ seq: number; payload: string }>(
      "SELECT seq, payload FROM turn_events WHERE run_id = ? AND seq >= ? ORDER BY seq",
      [runId, from],
    );
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.payload) as TurnEvent }));
  }

  /** Running runs whose turn lease lapsed (or was never taken: a build before leases): their instance stopped. */
  async orphaned(): Promise<Pick<RunRow, "id" | "owner_id" | "created_at">[]> {
    return this.db.all(
      `SELECT r.id, r.owner_id, r.created_at FROM turn_runs r LEFT JOIN leases l ON l.kind = 'turn' AND l.id = r.id
       WHERE r.status = 'running' AND (l.id IS NULL OR l.expires_at < ?)`,
      [Date.now()],
    );
  }

  /**
   * Fails a run whose instance stopped, as startup's failInterrupted does, and logs the terminal event a
   * follower ends with, in one transaction; false when the run had already committed.
   */
  async failOrphan(run: Pick<RunRow, "id" | "owner_id" | "created_at">): Promise<boolean> {
    return this.db.tx(async (tx) => {
      const { changes } = await tx.run(
        `UPDATE turn_runs SET status = 'failed', committed = 1, parts_json = ?, usage_json = 'null',
           error_code = 'interrupted', error_message = ?, finished_at = ? WHERE id = ? AND committed = 0`,
        [INTERRUPTED_PARTS, INTERRUPTED, isoNow(), run.id],
      );
      if (changes !== 1) return false;
      const last = await tx.get<{ seq: number | null }>(
        "SELECT MAX(seq) AS seq FROM turn_events WHERE run_id = ?",
        [run.id],
      );
      const durationMs = Math.max(0, Date.now() - Date.parse(run.created_at));
      const event: TurnEvent = { type: "turn_error", message: INTERRUPTED, code: "interrupted", durationMs };
      await this.appendEvents(run, [{ seq: (last?.seq ?? -1) + 1, event }], tx);
      return true;
    });
  }

  async requestCancel(runId: string): Promise<void> {
    await this.db.run("UPDATE turn_runs SET cancel_requested = 1 WHERE id = ?", [runId]);
  }

  /** Writes a run's outcome and history parts in one statement: a run is committed once, never after. */
  async commit(
    runId: string,
    outcome: {
      status: "completed" | "failed" | "cancelled";
      parts: unknown[];
      usage: unknown;
      errorCode?: string;
      errorMessage?: string;
      durationMs: number;
    },
    q: Queryable = this.db,
  ): Promise<boolean> {
    const result = await q.run(
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

  committed(owner: string, sessionId: string, limit: number, offset: number): Promise<RunRow[]> {
    return this.db.all<RunRow>(
      `SELECT ${COLUMNS} FROM turn_runs WHERE session_id = ? AND owner_id = ? AND committed = 1
       ORDER BY created_at, rowid LIMIT ? OFFSET ?`,
      [sessionId, owner, limit, offset],
    );
  }

  /** After a crash: runs left running never finished; they become failed, with no partial history. */
  async failInterrupted(): Promise<number> {
    const parts = INTERRUPTED_PARTS;
    const { changes } = await this.db.run(
      `UPDATE turn_runs SET status = 'failed', committed = 1, parts_json = ?, usage_json = 'null',
         error_code = 'interrupted', error_message = 'The server stopped during this turn', finished_at = ?
       WHERE status = 'running'`,
      [parts, isoNow()],
    );
    return changes;
  }
}
