/**
 * What a turn shows, as one list of display parts, built from either source: a committed turn's
 * history parts (`GET /api/sessions/{id}/turns`) or the live SSE events of `POST .../turns`. One
 * renderer then draws both, so a finished live turn looks exactly like it will after a reload.
 */

import type { TurnStreamEvent } from "../../../schemas/turn-stream.ts";
import type { TurnRecord } from "../../../schemas/turns.ts";

export type DisplayPart =
  | { kind: "code"; key: string; step: number; code: string }
  | { kind: "output"; key: string; step: number; output: string }
  | { kind: "reasoning"; key: string; text: string }
  | { kind: "text"; key: string; text: string }
  | { kind: "tool"; key: string; name: string; input: unknown; output?: unknown; error?: string | null }
  | { kind: "artifact"; key: string; id: string; title: string; mediaType: string; byteSize: number }
  | { kind: "attachment"; key: string; filename: string; byteSize: number }
  | { kind: "warning"; key: string; message: string }
  | { kind: "result"; key: string; value: unknown };

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

/** A committed turn's assistant parts, in order. */
export function partsFromHistory(turn: TurnRecord): DisplayPart[] {
  const out: DisplayPart[] = [];
  turn.messages
    .filter((m) => m.role === "assistant")
    .forEach((message, m) => {
      message.parts.forEach((part, i) => {
        const key = `${m}.${i}`;
        switch (part.type) {
          case "data-code":
            out.push({ kind: "code", key, step: part.data.step, code: part.data.code });
            break;
          case "data-output":
            out.push({ kind: "output", key, step: part.data.step, output: part.data.output });
            break;
          case "reasoning":
          case "text":
            out.push({ kind: part.type, key, text: part.text });
            break;
          case "dynamic-tool":
            out.push({
              kind: "tool",
              key,
              name: part.toolName,
              input: part.input,
              output: part.output,
              error: part.errorText ?? null,
            });
            break;
          case "data-artifact": {
            const { artifactId, title, mediaType, byteSize } = part.data;
            out.push({ kind: "artifact", key, id: artifactId, title, mediaType, byteSize });
            break;
          }
          case "data-attachment":
            out.push({ kind: "attachment", key, filename: part.data.filename, byteSize: part.data.byteSize });
            break;
          case "data-warning":
            out.push({ kind: "warning", key, message: part.data.message });
            break;
          case "data-structured_result":
            out.push({ kind: "result", key, value: part.data.value });
            break;
        }
      });
    });
  return out;
}

/** The live turn: its parts so far, where it is, and how it ended. */
export interface LiveState {
  parts: DisplayPart[];
  runId?: string;
  status: "preparing" | "running" | "completed" | "failed" | "cancelled";
  message?: string;
  error?: string;
}

export const initialLive = (): LiveState => ({ parts: [], status: "preparing" });

/** Appends to the part with `key`, or adds it: deltas grow one part instead of adding many. */
function upsert(parts: DisplayPart[], key: string, make: () => DisplayPart, grow: (p: DisplayPart) => void) {
  const found = parts.find((p) => p.key === key);
  if (found) grow(found);
  else parts.push(make());
}

/**
 * Applies one spec event of the default stream form (compat chunks, which carry no `event:` name,
 * are skipped by the caller). Returns a new state object whose `parts` array is new too, so the view
 * re-renders only the live turn.
 */
export function applyEvent(state: LiveState, e: TurnStreamEvent): LiveState {
  // Copies of the parts, so growing one in place never touches the previous state.
  const parts = state.parts.map((p) => ({ ...p }));
  const next: LiveState = { ...state, parts };
  switch (e.type) {
    case "turn_status":
      if (state.status === "preparing") next.message = e.message ?? "preparing";
      break;
    case "turn_start":
      next.runId = e.runId;
      next.status = "running";
      next.message = undefined;
      break;
    case "reasoning":
      upsert(
        parts,
        `r-${e.streamId}-${e.step}`,
        () => ({ kind: "reasoning", key: `r-${e.streamId}-${e.step}`, text: e.text ?? e.delta ?? "" }),
        (p) => {
          if (p.kind === "reasoning") p.text = e.final ? (e.text ?? p.text) : p.text + (e.delta ?? "");
        },
      );
      break;
    case "code":
    case "output": {
      const key = `${e.type}-${e.streamId}-${e.step}`;
      const value: string = e.type === "code" ? e.code : e.output;
      upsert(
        parts,
        key,
        () =>
          e.type === "code"
            ? { kind: "code", key, step: e.step, code: value }
            : { kind: "output", key, step: e.step, output: value },
        (p) => {
          if (p.kind === "code") p.code = e.isDelta ? p.code + value : value;
          if (p.kind === "output") p.output = e.isDelta ? p.output + value : value;
        },
      );
      break;
    }
    case "text":
      upsert(
        parts,
        `t-${e.streamId}`,
        () => ({ kind: "text", key: `t-${e.streamId}`, text: e.text ?? e.delta ?? "" }),
        (p) => {
          if (p.kind === "text") p.text = e.final ? (e.text ?? p.text) : p.text + (e.delta ?? "");
        },
      );
      break;
    case "tool_call":
      parts.push({ kind: "tool", key: `tool-${e.toolCallId}`, name: e.toolName, input: e.input });
      break;
    case "tool_result":
      upsert(
        parts,
        `tool-${e.toolCallId}`,
        () => ({ kind: "tool", key: `tool-${e.toolCallId}`, name: e.toolName, input: undefined }),
        (p) => {
          if (p.kind === "tool") {
            p.output = e.output;
            p.error = e.error;
          }
        },
      );
      break;
    case "artifact":
      parts.push({
        kind: "artifact",
        key: `a-${e.artifactId}`,
        id: e.artifactId,
        title: e.title,
        mediaType: e.mediaType,
        byteSize: e.byteSize,
      });
      break;
    case "attachment":
      parts.push({
        kind: "attachment",
        key: `att-${e.attachmentId}`,
        filename: e.filename,
        byteSize: e.byteSize,
      });
      break;
    case "warning":
      parts.push({ kind: "warning", key: `w-${parts.length}`, message: str(e.message ?? e.code) });
      break;
    case "structured_result":
      parts.push({ kind: "result", key: `res-${parts.length}`, value: e.value });
      break;
    case "turn_finish":
      next.status = e.status;
      break;
    case "turn_error":
      next.status = "failed";
      // The sentence that says why (`detail`) when the server knows more than the contract's terse message.
      next.error = str(e.detail ?? e.message ?? e.code);
      break;
    case "turn_cancelled":
      next.status = "cancelled";
      break;
  }
  return next;
}
