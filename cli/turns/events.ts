/**
 * The turn stream's events as this client reads them (the spec's event types, camelCase payloads). Only
 * the fields the terminal shows are typed; everything else passes through untouched to `--json`.
 */
import type { Static } from "@sinclair/typebox";
import type { Session as SessionSchema, TurnRecord as TurnRecordSchema } from "../../schemas/turns.ts";

export type Session = Static<typeof SessionSchema>;
export type TurnRecord = Static<typeof TurnRecordSchema>;

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  llmCalls?: number;
}

export type TurnEvent =
  | { type: "turn_status"; phase: string; status: string; message: string | null }
  | { type: "turn_start"; runId: string; sessionId: string; delivery: "live" | "replay" }
  | { type: "step_start"; step: number }
  | { type: "step_finish"; step: number; durationMs: number }
  | { type: "reasoning"; streamId: string; step: number; text: string; delta: string; final: boolean }
  | { type: "code"; streamId: string; step: number; code: string; isDelta: boolean; final: boolean }
  | { type: "output"; streamId: string; step: number; output: string; isDelta: boolean; final: boolean }
  | { type: "text"; streamId: string; delta: string; text: string; final: boolean }
  | { type: "tool_call"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool_result"; toolCallId: string; toolName: string; output: unknown; error: string | null }
  | { type: "skill"; skillId: string; name: string; phase: string; version: string }
  | { type: "child_progress"; childId: string; taskLabel: string; state: string; outcome: string | null }
  | { type: "attachment"; attachmentId: string; phase: string; filename: string; byteSize: number }
  | {
      type: "artifact";
      artifactId: string;
      artifactKind: string;
      title: string;
      mediaType: string;
      byteSize: number;
    }
  | { type: "structured_result"; schemaId: string; value: unknown }
  | { type: "usage"; iterations: number; durationMs: number; usage: Usage }
  | { type: "warning"; message: string; code: string }
  | { type: "turn_finish"; finishReason: string; status: string; durationMs: number }
  | { type: "turn_error"; message: string; code: string; durationMs: number; detail?: string }
  | { type: "turn_cancelled"; reason: string; durationMs: number };

/** The turn has ended once one of these came (a failed preparation adds turn_finish after turn_error). */
export const TERMINAL = new Set(["turn_finish", "turn_error", "turn_cancelled"]);

/** The turn's spec events, from the stream's typed frames (compatibility chunks carry no `event:`). */
export function isTurnEvent(value: unknown): value is TurnEvent {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}
