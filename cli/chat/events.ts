/**
 * The chat stream's NDJSON events and UI messages as this client reads them (the shapes the chat
 * family shares with the origin's web client). Only what the terminal shows is typed; `--json` passes
 * every line through untouched.
 */

export type Mode = "agent" | "plan" | "harness";

export interface QuestionOption {
  id: string;
  label: string;
}

export interface Question {
  toolCallId: string;
  questionId: string;
  kind: "single" | "multi" | "text";
  prompt: string;
  options: QuestionOption[];
}

/** A tool call, its result, or the model's thinking (`tool-Thinking`). */
export interface ToolPart {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  toolName?: string;
  isError?: boolean;
  awaitingAnswer?: boolean;
  question?: Question;
}

export type MessagePart =
  | { type: "text"; text: string }
  | { type: "error"; title?: string; message: string }
  | ToolPart;

export interface UiMessage {
  id: string;
  role: "user" | "assistant";
  parts: MessagePart[];
  createdAt?: number;
}

export interface PlanState {
  mode: Mode;
  executing: boolean;
  pendingDecision: boolean;
  completed: number;
  total: number;
  todos: { step: number; text: string; completed: boolean }[];
  message?: string;
}

export type ChatEvent =
  | {
      type: "start";
      id: string;
      runId: string;
      sessionId: string;
      sessionFile?: string;
      diagnostics?: string[];
    }
  | { type: "delta"; text: string; messageId?: string }
  | { type: "thinking"; text: string; messageId?: string }
  | { type: "tool"; part: ToolPart; messageId?: string }
  | { type: "plan"; mode: Mode; state: PlanState; message?: string }
  | { type: "state"; state: { name: string; message?: string } }
  | { type: "queue"; steering: string[]; followUp: string[] }
  | { type: "compaction"; phase: "start" | "end"; reason: string; aborted?: boolean; errorMessage?: string }
  | {
      type: "retry";
      phase: "start" | "end";
      attempt: number;
      maxAttempts?: number;
      delayMs?: number;
      errorMessage?: string;
      success?: boolean;
      finalError?: string;
    }
  | { type: "done"; runId: string; message: UiMessage; sessionId: string; sessionFile?: string }
  | { type: "error"; message: string; runId?: string };

export function isChatEvent(value: unknown): value is ChatEvent {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

export function isToolPart(part: MessagePart): part is ToolPart {
  return part.type.startsWith("tool-");
}
