/**
 * What a chat holds besides its messages, as the stream and the session routes carry it: mode, plan and
 * todos, a pending question (and how to read one from a `state` event or a `tool-Question` part).
 */
export type Mode = "agent" | "plan" | "harness";
export interface Todo {
  step: number;
  text: string;
  completed: boolean;
}
export interface PlanState {
  mode: Mode;
  executing: boolean;
  pendingDecision: boolean;
  completed: number;
  total: number;
  todos: Todo[];
  message?: string;
}
export interface Question {
  toolCallId: string;
  questionId?: string;
  kind: "single" | "multi" | "text";
  prompt: string;
  options: { id: string; label: string }[];
}
export interface SessionRef {
  sessionId?: string;
  sessionFile?: string;
}
export interface SendOptions {
  model?: { provider: string; id: string; thinkingLevel?: string };
  mode: Mode;
  planAction?: "execute" | "refine";
}

/** One NDJSON event of a chat stream. */
export type ChatEvent = Record<string, unknown> & { type: string };

/** A question from the `state` event, or from a pending `tool-Question` part (`input.questions[0]`). */
export function questionFrom(raw: unknown, toolCallId?: string): Question | undefined {
  const q = raw as Record<string, unknown> | undefined;
  if (!q) return undefined;
  const first = Array.isArray(q.questions) ? (q.questions[0] as Record<string, unknown>) : q;
  if (!first) return undefined;
  const options = Array.isArray(first.options)
    ? (first.options as Record<string, unknown>[]).map((o) => ({
        id: String(o.id ?? o.value),
        label: String(o.label ?? o.id ?? o.value),
      }))
    : [];
  const kind = (first.kind as Question["kind"]) ?? (options.length > 0 ? "single" : "text");
  return {
    toolCallId: String(q.toolCallId ?? toolCallId ?? ""),
    questionId: (first.questionId ?? first.id) as string | undefined,
    kind,
    prompt: String(first.prompt ?? first.question ?? first.label ?? ""),
    options,
  };
}
