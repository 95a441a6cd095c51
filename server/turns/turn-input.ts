/**
 * A turn request's input before it runs: the structural check of `skill_selections`, the fingerprint an
 * Idempotency-Key is bound to, the preparation failure shape, and how a committed run is replayed.
 */
import { createHash } from "node:crypto";
import { AppError } from "../http/errors.ts";
import { expandStored } from "./event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "./events.ts";
import type { TurnInput } from "./history.ts";
import type { RunRow } from "./store.ts";

/** A preparation failure: the stream answers `turn_error` (this message and code) then `turn_finish`. */
export class PreparationError extends Error {
  override name = "PreparationError";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const MAX_SELECTIONS = 4;

/** Structural check of `skill_selections` (before streaming: 422 `invalid_skill_selection`). */
export function parseSkillSelections(raw: unknown): TurnInput["skill_selections"] {
  if (raw === undefined) return [];
  const fail = (message: string): never => {
    throw new AppError("invalid", message, { code: "invalid_skill_selection" });
  };
  if (!Array.isArray(raw)) fail("skill_selections must be an array");
  const list = raw as unknown[];
  if (list.length > MAX_SELECTIONS) fail(`skill_selections holds at most ${MAX_SELECTIONS} entries`);
  const seen = new Set<string>();
  return list.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      fail(`skill_selections[${i}] must be an object`);
    const { id, expected_version, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0)
      fail(`skill_selections[${i}] has unknown fields: ${Object.keys(rest).join(", ")}`);
    if (typeof id !== "string" || id === "" || id.length > 100)
      fail(`skill_selections[${i}].id must be a non-empty string`);
    if (typeof expected_version !== "string" || expected_version === "" || expected_version.length > 50)
      fail(`skill_selections[${i}].expected_version must be a non-empty string`);
    if (seen.has(id as string)) fail(`skill_selections has '${id}' twice`);
    seen.add(id as string);
    return { id: id as string, expected_version: expected_version as string };
  });
}

/**
 * A committed run's events as a replay sends them: always closed by the spec's terminal shape, also for
 * a run that failed in preparation (turn_error, then turn_finish) or was cut by a crash (no terminal).
 */
export function replayable(stored: TurnEvent[], run: RunRow): TurnEvent[] {
  const out = expandStored(stored);
  const last = out.at(-1);
  if (!last || !TERMINAL_TYPES.has(last.type)) {
    out.push({
      type: "turn_error",
      message: run.error_message ?? "The turn did not finish",
      code: run.error_code ?? "execution_failed",
      durationMs: run.duration_ms ?? 0,
    });
  }
  if (out[0]?.type !== "turn_start") {
    out.push({
      type: "turn_finish",
      finishReason: "error",
      status: "failed",
      checkpointVersion: 0,
      durationMs: run.duration_ms ?? 0,
      traceId: null,
    });
  }
  return out;
}

/** SHA-256 of the canonical JSON of the input: what an Idempotency-Key is bound to. */
export function fingerprint(input: TurnInput): string {
  const canonical = JSON.stringify({
    attachment_ids: input.attachment_ids,
    skill_selections: input.skill_selections.map((s) => ({ expected_version: s.expected_version, id: s.id })),
    text: input.text,
  });
  return createHash("sha256").update(canonical).digest("hex");
}
