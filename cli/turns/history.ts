/**
 * Committed turns as events again: the history route returns each turn's messages as UI parts
 * (`reasoning`, `data-code`, `data-output`, `text`, `dynamic-tool`, `data-<event>`, `data-status`);
 * turned back into the stream's events they draw through the same TurnView as a live turn.
 */
import type { TurnStreamEvent as TurnEvent } from "../../schemas/turn-stream.ts";
import type { TurnPart, TurnRecord } from "../../schemas/turns.ts";
import { TurnView } from "./view.ts";

export function partsToEvents(parts: TurnPart[]): TurnEvent[] {
  const events: TurnEvent[] = [];
  let step = 0;
  let n = 0;
  const id = () => `h${++n}`;
  for (const part of parts) {
    switch (part.type) {
      case "step-start":
        step += 1;
        events.push({ type: "step_start", step });
        break;
      case "reasoning":
        events.push({
          type: "reasoning",
          streamId: id(),
          step,
          text: part.text,
          delta: part.text,
          final: true,
        });
        break;
      case "data-code":
        events.push({
          type: "code",
          streamId: id(),
          step: part.data.step,
          code: part.data.code,
          isDelta: false,
          final: true,
        });
        break;
      case "data-output":
        events.push({
          type: "output",
          streamId: id(),
          step: part.data.step,
          output: part.data.output,
          isDelta: false,
          final: true,
        });
        break;
      case "text":
        events.push({
          type: "text",
          streamId: id(),
          delta: part.text,
          text: part.text,
          final: true,
          role: "assistant",
        });
        break;
      case "dynamic-tool": {
        const { toolCallId, toolName } = part;
        events.push({ type: "tool_call", toolCallId, toolName, input: part.input });
        if (part.state === "output-available" || part.state === "output-error")
          events.push({
            type: "tool_result",
            toolCallId,
            toolName,
            output: part.output,
            error: part.state === "output-error" ? (part.errorText ?? "failed") : null,
          });
        break;
      }
      case "data-status":
        if (part.data.status === "failed")
          events.push({
            type: "turn_error",
            code: "failed",
            message: part.data.message ?? "failed",
            durationMs: 0,
          });
        break;
      case "data-artifact":
        events.push({ type: "artifact", ...part.data });
        break;
      case "data-attachment":
        events.push({ type: "attachment", ...part.data });
        break;
      case "data-skill":
        events.push({ type: "skill", ...part.data });
        break;
      case "data-warning":
        events.push({ type: "warning", ...part.data });
        break;
      case "data-structured_result":
        events.push({ type: "structured_result", ...part.data });
        break;
      case "data-child_progress":
        events.push({ type: "child_progress", ...part.data });
        break;
    }
  }
  return events;
}

/** One committed turn, drawn as the live view would have drawn it. */
export function historyView(record: TurnRecord, baseUrl: string): TurnView {
  const view = new TurnView(baseUrl, record.input.text);
  const assistant = record.messages.filter((m) => m.role === "assistant");
  const parts = assistant.flatMap((m) => m.parts);
  const cancelled = record.status === "cancelled";
  const events = cancelled ? [] : partsToEvents(parts);
  for (const event of events) view.apply(event);
  if (cancelled)
    view.apply({ type: "turn_cancelled", reason: "cancelled", durationMs: record.durationMs ?? 0 });
  else if (record.status === "failed" && !events.some((e) => e.type === "turn_error"))
    view.apply({
      type: "turn_error",
      code: record.error?.code ?? "failed",
      message: record.error?.message ?? "the turn failed",
      durationMs: record.durationMs ?? 0,
    });
  const usage = record.usage;
  if (usage)
    view.apply({
      type: "usage",
      iterations: events.filter((e) => e.type === "step_start").length,
      durationMs: record.durationMs ?? 0,
      usage,
    });
  view.note(`${record.runId} · ${record.status} · ${record.createdAt}`);
  return view;
}
