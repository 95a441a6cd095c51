/**
 * Committed turns as events again: the history route returns each turn's messages as UI parts
 * (`reasoning`, `data-code`, `data-output`, `text`, `dynamic-tool`, `data-<event>`, `data-status`);
 * turned back into the stream's events they draw through the same TurnView as a live turn.
 */
import type { TurnEvent, TurnRecord } from "./events.ts";
import { TurnView } from "./view.ts";

type Part = Record<string, unknown> & { type: string };

const DATA_EVENTS = new Set([
  "artifact",
  "attachment",
  "skill",
  "warning",
  "structured_result",
  "child_progress",
]);

export function partsToEvents(parts: Part[]): TurnEvent[] {
  const events: TurnEvent[] = [];
  let step = 0;
  let n = 0;
  const id = () => `h${++n}`;
  for (const part of parts) {
    const data = (part.data ?? {}) as Record<string, unknown>;
    if (part.type === "step-start") {
      step += 1;
      events.push({ type: "step_start", step });
    } else if (part.type === "reasoning") {
      const text = String(part.text ?? "");
      events.push({ type: "reasoning", streamId: id(), step, text, delta: text, final: true });
    } else if (part.type === "data-code") {
      const code = String(data.code ?? "");
      events.push({
        type: "code",
        streamId: id(),
        step: Number(data.step ?? step),
        code,
        isDelta: false,
        final: true,
      });
    } else if (part.type === "data-output") {
      const output = String(data.output ?? "");
      events.push({
        type: "output",
        streamId: id(),
        step: Number(data.step ?? step),
        output,
        isDelta: false,
        final: true,
      });
    } else if (part.type === "text") {
      const text = String(part.text ?? "");
      events.push({ type: "text", streamId: id(), delta: text, text, final: true });
    } else if (part.type === "dynamic-tool") {
      const toolCallId = String(part.toolCallId ?? id());
      const toolName = String(part.toolName ?? "tool");
      events.push({ type: "tool_call", toolCallId, toolName, input: part.input });
      if (part.state === "output-available" || part.state === "output-error")
        events.push({
          type: "tool_result",
          toolCallId,
          toolName,
          output: part.output,
          error: part.state === "output-error" ? String(part.errorText ?? "failed") : null,
        });
    } else if (part.type === "data-status") {
      if (data.status === "failed")
        events.push({
          type: "turn_error",
          code: "failed",
          message: String(data.message ?? "failed"),
          durationMs: 0,
        });
    } else if (part.type.startsWith("data-") && DATA_EVENTS.has(part.type.slice(5))) {
      events.push({ ...data, type: part.type.slice(5) } as TurnEvent);
    }
  }
  return events;
}

/** One committed turn, drawn as the live view would have drawn it. */
export function historyView(record: TurnRecord, baseUrl: string): TurnView {
  const view = new TurnView(baseUrl, record.input.text);
  const assistant = record.messages.filter((m) => m.role === "assistant");
  const parts = assistant.flatMap((m) => m.parts as Part[]);
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
  const usage = record.usage as { llmCalls?: number } | null;
  if (usage && typeof usage === "object")
    view.apply({
      type: "usage",
      iterations: events.filter((e) => e.type === "step_start").length,
      durationMs: record.durationMs ?? 0,
      usage,
    });
  view.note(`${record.runId} · ${record.status} · ${record.createdAt}`);
  return view;
}
