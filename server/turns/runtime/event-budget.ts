/**
 * What a turn may store: every event passes here before it is logged in the database and streamed. Model
 * code could otherwise grow the database without bound (a loop of tool calls, a huge tool argument).
 *
 * - Texts are cut to `maxChars`; a tool call's input and a tool result's output keep a preview.
 * - A step stores at most `perStep` events: past it, the step's tool calls, tool results and child
 *   progress are dropped (one `warning` says so) until the next step starts.
 * - A turn stores at most `perTurn` events and `maxBytes` of payload: past either, one `warning` is
 *   stored and `exhausted` turns true: the caller ends the turn (its terminal event is always stored).
 *
 * Streamed `output` deltas (what a step prints while it runs) count like tool calls: a step past its cap
 * stores no more of them, and its final `output` event still carries the whole text.
 * Streamed reasoning deltas are model output (bounded by the model calls), not counted against the
 * event caps; they are stored without their accumulated `text` (see compactForStorage), so their cost
 * stays linear in the text.
 */
import { TERMINAL_TYPES, type TurnEvent } from "./events.ts";

export interface EventLimits {
  perStep: number;
  perTurn: number;
  maxChars: number;
  maxBytes: number;
}

/** The longest preview of a tool call's input or a tool result's output kept in an event. */
export const TOOL_PREVIEW_CHARS = 4096;
const MAX_ITEMS = 1000;
const MAX_DEPTH = 32;

/** Events a step may drop past its cap: what a loop in Python multiplies. */
const DROPPABLE = new Set(["tool_call", "tool_result", "child_progress"]);

/** Set when capValue cut something. */
interface CutFlag {
  cut: boolean;
}

/** Strings cut to `maxChars`, arrays to `maxItems`, nesting to MAX_DEPTH; `flag.cut` says whether it did. */
export function capValue(
  value: unknown,
  maxChars: number,
  maxItems = MAX_ITEMS,
  flag: CutFlag = { cut: false },
  depth = 0,
): unknown {
  if (typeof value === "string") {
    if (value.length <= maxChars) return value;
    flag.cut = true;
    return `${value.slice(0, maxChars)}…[${value.length - maxChars} more characters]`;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) {
    flag.cut = true;
    return "[nested too deeply]";
  }
  if (Array.isArray(value)) {
    const items = value.slice(0, maxItems).map((v) => capValue(v, maxChars, maxItems, flag, depth + 1));
    if (value.length > maxItems) {
      flag.cut = true;
      items.push(`…[${value.length - maxItems} more items]`);
    }
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = capValue(v, maxChars, maxItems, flag, depth + 1);
  return out;
}

/** A value whose JSON is at most about `maxChars`: itself when it fits, else a shortened copy. */
export function preview(value: unknown, maxChars = TOOL_PREVIEW_CHARS): unknown {
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= maxChars) return value;
  const shortened = capValue(value, Math.floor(maxChars / 8), 20);
  const again = JSON.stringify(shortened) ?? "null";
  return again.length <= maxChars ? shortened : `${again.slice(0, maxChars)}…`;
}

/** The event with its texts and tool payloads within bounds; `cut` tells whether a text was cut. */
export function boundEvent(event: TurnEvent, maxChars: number): { event: TurnEvent; cut: boolean } {
  // Tool payloads are previews by design (the Python gets the whole value): no warning for those.
  if (event.type === "tool_call") return { event: { ...event, input: preview(event.input) }, cut: false };
  if (event.type === "tool_result") {
    const error = event.error === null ? null : (capValue(event.error, TOOL_PREVIEW_CHARS) as string);
    return { event: { ...event, output: preview(event.output), error }, cut: false };
  }
  const flag = { cut: false };
  const bounded = capValue(event, maxChars, MAX_ITEMS, flag) as TurnEvent;
  return { event: flag.cut ? bounded : event, cut: flag.cut };
}

/** A streamed (non-final) reasoning delta is stored without its accumulated text; replays rebuild it. */
export function compactForStorage(event: TurnEvent): TurnEvent {
  if (event.type !== "reasoning" || event.final) return event;
  const { text: _text, ...rest } = event;
  return rest as TurnEvent;
}

/** Rebuilds the accumulated `text` of stored reasoning deltas (the inverse of compactForStorage). */
export function expandStored(events: TurnEvent[]): TurnEvent[] {
  return events.map(storedExpander());
}

/** expandStored one event at a time (a follower reading the log in batches keeps one expander). */
export function storedExpander(): (event: TurnEvent) => TurnEvent {
  const texts = new Map<string, string>();
  return (event) => {
    if (event.type !== "reasoning") return event;
    if (event.final) {
      texts.delete(event.streamId);
      return event;
    }
    const text = (texts.get(event.streamId) ?? "") + event.delta;
    texts.set(event.streamId, text);
    return { ...event, text };
  };
}

export class EventBudget {
  private stepEvents = 0;
  private turnEvents = 0;
  private bytes = 0;
  private step = 0;
  private warnedStep = -1;
  private warnedCut = false;
  /** True once a turn cap is passed: nothing but the terminal event is stored any more. */
  exhausted = false;

  constructor(private readonly limits: EventLimits) {}

  /** The events to store for `event`, in order: nothing (dropped), the bounded event, warnings. */
  admit(event: TurnEvent): TurnEvent[] {
    const { event: bounded, cut } = boundEvent(event, this.limits.maxChars);
    if (TERMINAL_TYPES.has(event.type)) return [bounded];
    if (this.exhausted) return [];
    if (event.type === "step_start") {
      this.step = event.step;
      this.stepEvents = 0;
    }
    const out: TurnEvent[] = [];
    if (cut && !this.warnedCut) {
      this.warnedCut = true;
      out.push(
        warning(
          `An event of this turn was longer than ${this.limits.maxChars} characters and was cut`,
          "event_truncated",
        ),
      );
    }
    // Streamed output (the step's final output event has it all) goes too, as a loop could multiply it.
    const droppable = DROPPABLE.has(event.type) || (event.type === "output" && !event.final);
    if (droppable && this.stepEvents >= this.limits.perStep) {
      if (this.warnedStep !== this.step) {
        this.warnedStep = this.step;
        out.push(
          warning(
            `Step ${this.step} produced more than ${this.limits.perStep} events; its further tool calls and progress are not recorded`,
            "step_event_limit",
          ),
        );
      }
    } else out.push(bounded);
    return this.charge(out);
  }

  /** Counts what is about to be stored; past a turn cap, stores a warning instead and ends the turn. */
  private charge(events: TurnEvent[]): TurnEvent[] {
    const accepted: TurnEvent[] = [];
    for (const event of events) {
      // Streamed reasoning deltas are model output: their bytes count, not their number.
      if (event.type !== "reasoning" || event.final) {
        this.stepEvents++;
        this.turnEvents++;
      }
      this.bytes += JSON.stringify(compactForStorage(event)).length;
      if (this.turnEvents > this.limits.perTurn || this.bytes > this.limits.maxBytes) {
        this.exhausted = true;
        accepted.push(
          warning(
            `This turn stored more than ${this.limits.perTurn} events or ${this.limits.maxBytes} bytes of events; it ends here`,
            "event_limit",
          ),
        );
        return accepted;
      }
      accepted.push(event);
    }
    return accepted;
  }
}

function warning(message: string, code: string): TurnEvent {
  return { type: "warning", message, code };
}
