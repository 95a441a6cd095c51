/**
 * Committed history: the parts of a turn's assistant message, built once from its events at commit. A
 * cancelled turn keeps only a tombstone.
 */
import type { TurnPart } from "../../../schemas/turns.ts";
import type { TurnEvent } from "./events.ts";

export type Part = TurnPart;

export function assistantParts(events: TurnEvent[], status: "completed" | "failed"): Part[] {
  const parts: Part[] = [];
  const tools = new Map<string, Part>();
  for (const e of events) {
    switch (e.type) {
      case "step_start":
        parts.push({ type: "step-start" });
        break;
      case "reasoning":
        if (e.final) parts.push({ type: "reasoning", text: e.text });
        break;
      case "code":
        if (e.final) parts.push({ type: "data-code", data: { step: e.step, code: e.code } });
        break;
      case "output":
        if (e.final) parts.push({ type: "data-output", data: { step: e.step, output: e.output } });
        break;
      case "text":
        if (e.final) parts.push({ type: "text", text: e.text });
        break;
      case "tool_call": {
        const part: Part = {
          type: "dynamic-tool",
          toolName: e.toolName,
          toolCallId: e.toolCallId,
          state: "input-available",
          input: e.input,
        };
        tools.set(e.toolCallId, part);
        parts.push(part);
        break;
      }
      case "tool_result": {
        const part = tools.get(e.toolCallId);
        if (!part) break;
        if (e.error) Object.assign(part, { state: "output-error", errorText: e.error });
        else Object.assign(part, { state: "output-available", output: e.output });
        break;
      }
      case "structured_result":
        parts.push({ type: "data-structured_result", data: withoutType(e) });
        break;
      case "skill":
        parts.push({ type: "data-skill", data: withoutType(e) });
        break;
      case "artifact":
        parts.push({ type: "data-artifact", data: withoutType(e) });
        break;
      case "attachment":
        parts.push({ type: "data-attachment", data: withoutType(e) });
        break;
      case "warning":
        parts.push({ type: "data-warning", data: withoutType(e) });
        break;
      case "child_progress":
        if (e.state !== "not_started" && e.state !== "running")
          parts.push({ type: "data-child_progress", data: withoutType(e) });
        break;
      case "turn_error":
        parts.push({
          type: "data-status",
          data: { phase: "execution", status: "failed", message: e.message },
        });
        break;
      default:
        break;
    }
  }
  if (status === "completed")
    parts.push({ type: "data-status", data: { phase: "execution", status: "completed", message: null } });
  return parts;
}

/** A cancelled turn: one `cancelled` status part and the text "Turn cancelled"; nothing it produced. */
export function tombstoneParts(): Part[] {
  return [
    { type: "data-status", data: { phase: "execution", status: "cancelled", message: null } },
    { type: "text", text: "Turn cancelled" },
  ];
}

/** The event without its `type`: the `data` of its `data-<type>` part. */
function withoutType<E extends TurnEvent>(e: E): Omit<E, "type"> {
  const { type: _type, ...rest } = e;
  return rest;
}
