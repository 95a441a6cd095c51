/**
 * One conversation's state and actions: open a session, send a turn and apply its NDJSON stream event by
 * event, abort, answer a question, execute or refine a plan, queue a follow-up while a turn runs. A
 * reply keeps streaming while another session is open and is shown again, still live, on coming back.
 */
import { useRef, useState } from "preact/hooks";
import type {
  ChatStreamEvent as Event,
  Mode,
  PlanState,
  ChatQuestion as Question,
  SessionRef,
  UiMessage,
} from "../../schemas/chat.ts";
import { ApiError, api, readNdjson, request } from "../lib/api.ts";
import {
  appendText,
  normalizeMessages,
  normalizePart,
  questionFrom,
  thinkingPart,
  updateMessage,
  upsertPart,
} from "./messages.ts";

/** How the composer asks for a reply: the model, the mode, and a plan decision. */
export interface SendOptions {
  model?: { provider: string; id: string; thinkingLevel?: string };
  mode: Mode;
  planAction?: "execute" | "refine";
}

export interface Queue {
  steering: string[];
  followUp: string[];
}

/**
 * What one session shows. The running reply writes to its own session's view: the one on screen, or,
 * while the person looks at another session, a parked copy that keeps taking the stream's events, so
 * coming back shows the reply as far as it has got and still streaming (the request stays open: the
 * chat family aborts a run whose client disconnects).
 */
interface View {
  ref: SessionRef;
  messages: UiMessage[];
  plan?: PlanState;
  question?: Question;
  queue: Queue;
  notice?: string;
  error?: string;
}

const EMPTY_QUEUE: Queue = { steering: [], followUp: [] };
const EMPTY: View = { ref: {}, messages: [], queue: EMPTY_QUEUE };

const sameSession = (a: SessionRef, b: SessionRef) =>
  a.sessionId && b.sessionId
    ? a.sessionId === b.sessionId
    : Boolean(a.sessionFile) && a.sessionFile === b.sessionFile;

export function useChat(onSessionsChanged: () => void) {
  const [shown, setShown] = useState<View>(EMPTY);
  const visible = useRef<View>(EMPTY);
  /** The running reply's session while another one is on screen. */
  const parked = useRef<View | undefined>(undefined);
  const [away, setAway] = useState(false);
  const [running, setRunning] = useState(false);
  const runningRef = useRef(false);
  const assistantId = useRef<string | undefined>(undefined);
  const lastSend = useRef<{ text: string; options: SendOptions } | undefined>(undefined);

  const show = (view: View) => {
    visible.current = view;
    setShown(view);
  };
  const onScreen = (change: (v: View) => View) => show(change(visible.current));
  /** Changes the running reply's view, on screen or parked. */
  const toRun = (change: (v: View) => View) => {
    if (parked.current) parked.current = change(parked.current);
    else onScreen(change);
  };
  const messagesOfRun = (change: (m: UiMessage[]) => UiMessage[]) =>
    toRun((v) => ({ ...v, messages: change(v.messages) }));

  /** Leaving the running reply's session: its view keeps taking events out of sight. */
  const park = () => {
    if (!runningRef.current || parked.current) return;
    parked.current = visible.current;
    setAway(true);
  };

  const reset = () => {
    park();
    show(EMPTY);
  };

  const open = async (ref: SessionRef) => {
    if (parked.current && sameSession(ref, parked.current.ref)) {
      // Back to the running reply: as far as it has got, still streaming.
      show(parked.current);
      parked.current = undefined;
      setAway(false);
      return;
    }
    if (runningRef.current && !parked.current && sameSession(ref, visible.current.ref)) return;
    park();
    const query = new URLSearchParams();
    if (ref.sessionId) query.set("sessionId", ref.sessionId);
    else if (ref.sessionFile) query.set("sessionFile", ref.sessionFile);
    const hydrated = await api<{ session: Record<string, unknown>; messages: unknown[] }>(
      `/api/chat/session?${query}`,
    );
    const s = hydrated.session;
    const pending = s.pendingQuestions as unknown[] | undefined;
    show({
      ref: {
        sessionId: (s.sessionId ?? ref.sessionId) as string,
        sessionFile: (s.sessionFile ?? ref.sessionFile) as string,
      },
      messages: normalizeMessages(hydrated.messages),
      plan: (s.plan as PlanState | undefined) ?? undefined,
      question: pending?.[0] ? questionFrom(pending[0]) : undefined,
      queue: EMPTY_QUEUE,
    });
  };

  const apply = (event: Event) => {
    const id = assistantId.current;
    switch (event.type) {
      case "start": {
        assistantId.current = String(event.id ?? event.runId);
        const message: UiMessage = { id: assistantId.current, role: "assistant", parts: [] };
        toRun((v) => ({
          ...v,
          ref: { sessionId: event.sessionId as string, sessionFile: event.sessionFile as string | undefined },
          messages: [...v.messages, message],
          notice: event.sessionReset
            ? "The earlier session could not be opened: this is a new one."
            : v.notice,
        }));
        // A new chat is listed at once, so it can be left and come back to while it replies.
        onSessionsChanged();
        break;
      }
      case "delta":
        if (id) messagesOfRun((m) => updateMessage(m, id, (msg) => appendText(msg, String(event.text))));
        break;
      case "thinking":
        if (id)
          messagesOfRun((m) =>
            updateMessage(m, id, (msg) =>
              upsertPart(msg, thinkingPart(id, String(event.text), "input-streaming")),
            ),
          );
        break;
      case "tool": {
        const part = normalizePart(event.part as Record<string, unknown>);
        if (id) messagesOfRun((m) => updateMessage(m, id, (msg) => upsertPart(msg, part)));
        if (part.type === "tool-Question" && !String(part.state ?? "").startsWith("output")) {
          const q = questionFrom(part.input, part.toolCallId);
          if (q?.prompt) toRun((v) => ({ ...v, question: q }));
        } else if (part.type === "tool-Question" || part.type === "tool-questionnaire") {
          if (String(part.state ?? "").startsWith("output")) toRun((v) => ({ ...v, question: undefined }));
        }
        break;
      }
      case "plan":
        toRun((v) => ({ ...v, plan: event.state as PlanState }));
        break;
      case "state": {
        const state = event.state as Record<string, unknown>;
        if (state.status === "awaiting-answer")
          toRun((v) => ({ ...v, question: questionFrom(state.question) }));
        break;
      }
      case "queue":
        toRun((v) => ({
          ...v,
          queue: {
            steering: (event.steering as string[]) ?? [],
            followUp: (event.followUp as string[]) ?? [],
          },
        }));
        break;
      case "compaction":
        toRun((v) => ({
          ...v,
          notice:
            event.phase === "start"
              ? `Compacting the conversation (${String(event.reason)})…`
              : event.aborted
                ? "Compaction was stopped."
                : "Conversation compacted.",
        }));
        break;
      case "retry":
        toRun((v) => ({
          ...v,
          notice:
            event.phase === "start"
              ? `Retrying (${String(event.attempt)}/${String(event.maxAttempts ?? "?")}): ${String(event.errorMessage ?? "")}`
              : event.success
                ? "Retry succeeded."
                : `Retry failed: ${String(event.finalError ?? "")}`,
        }));
        break;
      case "done": {
        const final = event.message as Record<string, unknown> | undefined;
        const doneId = id ?? String(final?.id ?? "");
        toRun((v) => ({
          ...v,
          messages: updateMessage(v.messages, doneId, (msg) => {
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
          ref: {
            sessionId: (event.sessionId as string) ?? v.ref.sessionId,
            sessionFile: (event.sessionFile as string) ?? v.ref.sessionFile,
          },
          queue: EMPTY_QUEUE,
        }));
        break;
      }
      case "error": {
        const message = String(event.message ?? "The request failed");
        // Shown in the reply it belongs to (with Retry there), else below the transcript.
        if (id)
          messagesOfRun((m) => updateMessage(m, id, (msg) => upsertPart(msg, { type: "error", message })));
        else toRun((v) => ({ ...v, error: message }));
        break;
      }
    }
  };

  const run = async (body: Record<string, unknown>) => {
    runningRef.current = true;
    setRunning(true);
    onScreen((v) => ({ ...v, error: undefined, notice: undefined }));
    assistantId.current = undefined;
    try {
      const response = await request("/api/chat", { method: "POST", body });
      for await (const event of readNdjson<Event>(response)) apply(event);
    } catch (e) {
      const message = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      toRun((v) => ({ ...v, error: message }));
    } finally {
      toRun((v) => ({ ...v, question: undefined }));
      // Ended out of sight: opening that session again reads it from the server.
      parked.current = undefined;
      setAway(false);
      runningRef.current = false;
      setRunning(false);
      assistantId.current = undefined;
      onSessionsChanged();
    }
  };

  const body = (options: SendOptions, extra: Record<string, unknown>) => ({
    ...visible.current.ref,
    ...(options.model ? { model: options.model } : {}),
    mode: options.mode,
    ...extra,
  });

  /** A reply runs in a session that is not on screen: one reply at a time. */
  const busyElsewhere = () => {
    if (!parked.current) return false;
    onScreen((v) => ({
      ...v,
      error: "A reply is still running in another chat: open it to stop it, or wait until it ends.",
    }));
    return true;
  };

  const send = async (text: string, options: SendOptions) => {
    if (busyElsewhere()) return;
    if (runningRef.current) {
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
    onScreen((v) => ({ ...v, messages: [...v.messages, user] }));
    await run(
      body(options, { message: text, ...(options.planAction ? { planAction: options.planAction } : {}) }),
    );
  };

  const planAction = async (action: "execute" | "refine", options: SendOptions, text?: string) => {
    if (busyElsewhere()) return;
    onScreen((v) => ({ ...v, plan: v.plan ? { ...v.plan, pendingDecision: false } : v.plan }));
    if (action === "refine") {
      await send(text || "Refine the plan.", { ...options, mode: "plan", planAction: "refine" });
      return;
    }
    await run(body({ ...options, mode: "agent" }, { planAction: "execute" }));
  };

  const retry = async () => {
    const last = lastSend.current;
    if (!last || busyElsewhere()) return;
    await run(body(last.options, { message: last.text }));
  };

  const abort = async () => {
    await api("/api/chat/abort", { method: "POST", body: visible.current.ref }).catch(() => undefined);
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
      body: { ...visible.current.ref, toolCallId: q.toolCallId, answer: answerBody },
    });
    onScreen((v) => ({ ...v, question: undefined }));
  };

  return {
    session: shown.ref,
    messages: shown.messages,
    /** A reply streams in the session on screen. */
    streaming: running && !away,
    /** The session whose reply runs out of sight, if any (the sidebar marks it). */
    replyingElsewhere: away ? parked.current?.ref.sessionId : undefined,
    plan: shown.plan,
    question: shown.question,
    queue: shown.queue,
    notice: shown.notice,
    error: shown.error,
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
