/**
 * Durable cancellation of a run (PUT /api/runs/{id}/cancellation): recorded in SQLite, and a run
 * executing in this process is stopped at once. A run already settled reports its state.
 */
import { AppError } from "../../http/errors.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import type { LiveRuns } from "../runtime/live-run.ts";
import type { RunRow, TurnRunStore } from "../stores/runs.ts";

export interface CancellationDeps {
  runs: Pick<TurnRunStore, "get" | "requestCancel">;
  live: Pick<LiveRuns, "get">;
  analytics: Pick<TurnAnalytics, "capture">;
}

export type Cancellation =
  | { accepted: true; view: { runId: string; status: "cancelling" } }
  | { accepted: false; view: { runId: string; status: Exclude<RunRow["status"], "running"> } };

export function cancelRun(deps: CancellationDeps, owner: string, runId: string): Cancellation {
  const run = deps.runs.get(owner, runId);
  if (!run) throw AppError.notFound("Run not found");
  deps.analytics.capture("run_cancellation_requested");
  if (run.status !== "running") return { accepted: false, view: { runId: run.id, status: run.status } };
  deps.runs.requestCancel(run.id);
  deps.live.get(run.id)?.controller.abort("cancelled");
  return { accepted: true, view: { runId: run.id, status: "cancelling" } };
}
