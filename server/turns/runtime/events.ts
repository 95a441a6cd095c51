/**
 * The turn stream's events (spec "Events": camelCase payloads with a matching `type`) and their
 * compatibility chunks (AI SDK UIMessageChunk shapes). docs/design.md §10: the default stream carries
 * each spec event followed by its compat chunks; `?format=ui-message-stream` carries only the chunks,
 * every spec event without a UI chunk travelling as a `data-<type>` part.
 */
import type { TurnStreamEvent, TurnUsage } from "../../../schemas/turn-stream.ts";

/** One spec event of the stream: the schema's union (schemas/turn-stream.ts). */
export type TurnEvent = TurnStreamEvent;
export type Usage = TurnUsage;

export type TurnEventType = TurnEvent["type"];
export const TERMINAL_TYPES: ReadonlySet<string> = new Set(["turn_finish", "turn_error", "turn_cancelled"]);

export type Chunk = { type: string } & Record<string, unknown>;

/** Drops the `type` key: the payload of a `data-<type>` part. */
function dataOf(event: TurnEvent): Record<string, unknown> {
  const { type: _type, ...rest } = event;
  return rest;
}

/**
 * Turns spec events into UI message chunks. Stateful per stream: reasoning and text parts are opened
 * (`*-start`) before their first delta and closed (`*-end`) with their final event, as the AI SDK's
 * client requires.
 */
export class CompatEncoder {
  private readonly open = new Set<string>();

  chunks(event: TurnEvent): Chunk[] {
    switch (event.type) {
      case "turn_status":
        return [{ type: "data-status", data: dataOf(event), transient: true }];
      case "turn_start":
        return [
          {
            type: "start",
            messageId: event.runId,
            messageMetadata: { runId: event.runId, sessionId: event.sessionId, delivery: event.delivery },
          },
        ];
      case "step_start":
        return [{ type: "start-step" }];
      case "step_finish":
        return [{ type: "finish-step" }];
      case "reasoning":
        return this.streamed("reasoning", event.streamId, event.delta, event.final);
      case "text":
        return this.streamed("text", event.streamId, event.delta, event.final);
      case "tool_call":
        return [
          {
            type: "tool-input-available",
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            input: event.input ?? null,
            dynamic: true,
          },
        ];
      case "tool_result":
        return event.error
          ? [
              {
                type: "tool-output-error",
                toolCallId: event.toolCallId,
                errorText: event.error,
                dynamic: true,
              },
            ]
          : [
              {
                type: "tool-output-available",
                toolCallId: event.toolCallId,
                output: event.output ?? null,
                dynamic: true,
              },
            ];
      case "turn_finish":
        return [
          ...this.closeAll(),
          {
            type: "finish",
            finishReason: event.finishReason === "error" ? "error" : event.finishReason,
            messageMetadata: {
              status: event.status,
              checkpointVersion: event.checkpointVersion,
              durationMs: event.durationMs,
            },
          },
        ];
      case "turn_error":
        return [...this.closeAll(), { type: "error", errorText: event.message }];
      case "turn_cancelled":
        return [{ type: "abort", reason: event.reason }];
      case "usage":
        return [{ type: "data-usage", data: dataOf(event) }];
      case "code":
      case "output":
        // A data part with an id replaces the one before it: streamed output deltas travel as transient
        // parts (a client's onData sees them), and the final event's part holds the whole text.
        return [
          {
            type: `data-${event.type}`,
            id: `${event.type}-${event.streamId}`,
            data: dataOf(event),
            ...(event.final ? {} : { transient: true }),
          },
        ];
      default:
        return [{ type: `data-${event.type}`, data: dataOf(event) }];
    }
  }

  private streamed(kind: "text" | "reasoning", id: string, delta: string, final: boolean): Chunk[] {
    const key = `${kind}:${id}`;
    const out: Chunk[] = [];
    if (!this.open.has(key)) {
      this.open.add(key);
      out.push({ type: `${kind}-start`, id });
    }
    if (delta) out.push({ type: `${kind}-delta`, id, delta });
    if (final) {
      this.open.delete(key);
      out.push({ type: `${kind}-end`, id });
    }
    return out;
  }

  private closeAll(): Chunk[] {
    const out = [...this.open].map((key) => {
      const [kind, ...rest] = key.split(":");
      return { type: `${kind}-end`, id: rest.join(":") };
    });
    this.open.clear();
    return out;
  }
}
