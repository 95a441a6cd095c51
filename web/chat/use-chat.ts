/**
 * One conversation's state and actions: open a session, send a turn and apply its NDJSON stream event by
 * event, abort, answer a question, execute or refine a plan, queue a follow-up while a turn runs.
 */
import { useRef, useState } from "preact/hooks";
import { ApiError, api, readNdjson, request } from "../lib/api.ts";
import {
  appendText,
  normalizeMessages,
  normalizePart,
  thinkingPart,
  type UiMessage,
  updateMessage,
  upsertPart,
} from "./messages.ts";

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

type Event = Record<string, unknown> & { type: string };

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

export function useChat(onSessionsChanged: () => void) {
  const [session, setSession] = useState<SessionRef>({});
  const [messages, setMessages] = useState<UiMessage[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [plan, setPlan] = useState<PlanState | undefined>();
  const [question, setQuestion] = useState<Question | undefined>();
  const [queue, setQueue] = useState<{ steering: string[]; followUp: string[] }>({
    steering: [],
    followUp: [],
  });
  const [notice, setNotice] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const sessionRef = useRef<SessionRef>({});
  const assistantId = useRef<string | undefined>(undefined);
  const lastSend = useRef<{ text: string; options: SendOptions } | undefined>(undefined);

  const setRef = (ref: SessionRef) => {
    sessionRef.current = ref;
    setSession(ref);
  };

  const reset = () => {
    setRef({});
    setMessages([]);
    setPlan(undefined);
    setQuestion(undefined);
    setNotice(undefined);
    setError(undefined);
  };

  const open = async (ref: SessionRef) => {
    const query = new URLSearchParams();
    if (ref.sessionId) query.set("sessionId", ref.sessionId);
    else if (ref.sessionFile) query.set("sessionFile", ref.sessionFile);
    const hydrated = await api<{ session: Record<string, unknown>; messages: unknown[] }>(
      `/api/chat/session?${query}`,
    );
    const s = hydrated.session;
    setRef({
      sessionId: (s.sessionId ?? ref.sessionId) as string,
      sessionFile: (s.sessionFile ?? ref.sessionFile) as string,
    });
    setMessages(normalizeMessages(hydrated.messages));
    setPlan((s.plan as PlanState | undefined) ?? undefined);
    const pending = s.pendingQuestions as unknown[] | undefined;
    setQuestion(pending?.[0] ? questionFrom(pending[0]) : undefined);
    setError(undefined);
    setNotice(undefined);
  };

  const apply = (event: Event) => {
    const id = assistantId.current;
    switch (event.type) {
      case "start": {
        assistantId.current = String(event.id ?? event.runId);
        setRef({
          sessionId: event.sessionId as string,
          sessionFile: event.sessionFile as string | undefined,
        });
        const message: UiMessage = { id: assistantId.current, role: "assistant", parts: [] };
        setMessages((m) => [...m, message]);
        if (event.sessionReset) setNotice("The earlier session could not be opened: this is a new one.");
        break;
      }
      case "delta":
        if (id) setMessages((m) => updateMessage(m, id, (msg) => appendText(msg, String(event.text))));
        break;
      case "thinking":
        if (id)
          setMessages((m) =>
            updateMessage(m, id, (msg) =>
              upsertPart(msg, thinkingPart(id, String(event.text), "input-streaming")),
            ),
          );
        break;
      case "tool": {
        const part = normalizePart(event.part as Record<string, unknown>);
        if (id) setMessages((m) => updateMessage(m, id, (msg) => upsertPart(msg, part)));
        if (part.type === "tool-Question" && !String(part.state ?? "").startsWith("output")) {
          const q = questionFrom(part.input, part.toolCallId);
          if (q?.prompt) setQuestion(q);
        } else if (part.type === "tool-Question" || part.type === "tool-questionnaire") {
          if (String(part.state ?? "").startsWith("output")) setQuestion(undefined);
        }
        break;
      }
      case "plan":
        setPlan(event.state as PlanState);
        break;
      case "state": {
        const state = event.state as Record<string, unknown>;
        if (state.status === "awaiting-answer") setQuestion(questionFrom(state.question));
        break;
      }
      case "queue":
        setQueue({
          steering: (event.steering as string[]) ?? [],
          followUp: (event.followUp as string[]) ?? [],
        });
        break;
      case "compaction":
        setNotice(
          event.phase === "start"
            ? `Compacting the conversation (${String(event.reason)})…`
            : event.aborted
              ? "Compaction was stopped."
              : "Conversation compacted.",
        );
        break;
      case "retry":
        setNotice(
          event.phase === "start"
            ? `Retrying (${String(event.attempt)}/${String(event.maxAttempts ?? "?")}): ${String(event.errorMessage ?? "")}`
            : event.success
              ? "Retry succeeded."
              : `Retry failed: ${String(event.finalError ?? "")}`,
        );
        break;
      case "done": {
        const final = event.message as Record<string, unknown> | undefined;
        const doneId = id ?? String(final?.id ?? "");
        setMessages((m) =>
          updateMessage(m, doneId, (msg) => {
            // The final message replaces the streamed one when it is a UI message; thinking is settled.
            const base = Array.isArray(final?.parts) ? (normalizeMessages([final])[0] ?? msg) : msg;
            return {
              ...base,
              id: msg.id,
              parts: base.parts.map((p) =>
                p.type === "tool-Thinking" ? { ...p, state: "output-available" } : p,
              ),
            };
          }),
        );
        setRef({
          sessionId: (event.sessionId as string) ?? sessionRef.current.sessionId,
          sessionFile: (event.sessionFile as string) ?? sessionRef.current.sessionFile,
        });
        setQueue({ steering: [], followUp: [] });
        break;
      }
      case "error": {
        const message = String(event.message ?? "The request failed");
        setError(message);
        if (id)
          setMessages((m) => updateMessage(m, id, (msg) => upsertPart(msg, { type: "error", message })));
        break;
      }
    }
  };

  const run = async (body: Record<string, unknown>) => {
    setStreaming(true);
    setError(undefined);
    setNotice(undefined);
    assistantId.current = undefined;
    try {
      const response = await request("/api/chat", { method: "POST", body });
      for await (const event of readNdjson<Event>(response)) apply(event);
    } catch (e) {
      setError(e instanceof ApiError || e instanceof Error ? e.message : String(e));
    } finally {
      setStreaming(false);
      setQuestion(undefined);
      assistantId.current = undefined;
      onSessionsChanged();
    }
  };

  const body = (options: SendOptions, extra: Record<string, unknown>) => ({
    ...sessionRef.current,
    ...(options.model ? { model: options.model } : {}),
    mode: options.mode,
    ...extra,
  });

  const send = async (text: string, options: SendOptions) => {
    if (streaming) {
      // A turn is running: queue it as a follow-up (the server answers with one `queue` event).
      const response = await request("/api/chat", {
        method: "POST",
        body: body(options, { message: text, streamingBehavior: "followUp" }),
      });
      for await (const event of readNdjson<Event>(response)) apply(event);
      return;
    }
    lastSend.current = { text, options };
    const user: UiMessage = {
      id: `local-${Date.now()}`,
      role: "user",
      parts: [{ type: "text", text }],
      createdAt: Date.now(),
    };
    setMessages((m) => [...m, user]);
    await run(
      body(options, { message: text, ...(options.planAction ? { planAction: options.planAction } : {}) }),
    );
  };

  const planAction = async (action: "execute" | "refine", options: SendOptions, text?: string) => {
    setPlan((p) => (p ? { ...p, pendingDecision: false } : p));
    if (action === "refine") {
      await send(text || "Refine the plan.", { ...options, mode: "plan", planAction: "refine" });
      return;
    }
    await run(body({ ...options, mode: "agent" }, { planAction: "execute" }));
  };

  const retry = async () => {
    const last = lastSend.current;
    if (!last) return;
    await run(body(last.options, { message: last.text }));
  };

  const abort = async () => {
    await api("/api/chat/abort", { method: "POST", body: sessionRef.current }).catch(() => undefined);
  };

  const answer = async (q: Question, value: { selectedIds?: string[]; text?: string; skip?: boolean }) => {
    const answerBody = value.skip
      ? { kind: "skip" }
      : {
          kind: q.kind,
          ...(q.questionId ? { questionId: q.questionId } : {}),
          ...(value.selectedIds ? { selectedIds: value.selectedIds } : {}),
          ...(value.text !== undefined ? { text: value.text } : {}),
        };
    await api("/api/chat/question", {
      method: "POST",
      body: { ...sessionRef.current, toolCallId: q.toolCallId, answer: answerBody },
    });
    setQuestion(undefined);
  };

  return {
    session,
    messages,
    streaming,
    plan,
    question,
    queue,
    notice,
    error,
    reset,
    open,
    send,
    planAction,
    retry,
    abort,
    answer,
  };
}

export type Chat = ReturnType<typeof useChat>;
