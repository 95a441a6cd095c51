/**
 * One conversation's state and actions: open a session, send a turn and apply its NDJSON stream event by
 * event, abort, answer a question, execute or refine a plan, queue a follow-up while a turn runs. A
 * reply keeps streaming while another session is open and is shown again, still live, on coming back.
 */
import { useRef, useState } from "preact/hooks";
import type {
  ChatStreamEvent,
  Hydrated,
  Mode,
  ChatQuestion as Question,
  SessionRef,
  UiMessage,
} from "../../schemas/chat.ts";
import { ApiError, api, readNdjson, request } from "../lib/api.ts";
import { applyChatEvent, type ChatView, EMPTY_QUEUE, EMPTY_VIEW } from "./chat-state.ts";
import { normalizeMessages } from "./messages.ts";

/** How the composer asks for a reply: the model, the mode, and a plan decision. */
export interface SendOptions {
  model?: { provider: string; id: string; thinkingLevel?: string };
  mode: Mode;
  planAction?: "execute" | "refine";
}

const sameSession = (a: SessionRef, b: SessionRef) =>
  a.sessionId && b.sessionId
    ? a.sessionId === b.sessionId
    : Boolean(a.sessionFile) && a.sessionFile === b.sessionFile;

export function useChat(onSessionsChanged: () => void) {
  const [shown, setShown] = useState<ChatView>(EMPTY_VIEW);
  const visible = useRef<ChatView>(EMPTY_VIEW);
  /**
   * The running reply writes to its own session's view: the one on screen, or, while the person looks at
   * another session, this parked copy that keeps taking the stream's events, so coming back shows the
   * reply as far as it has got and still streaming (the request stays open: the chat family aborts a run
   * whose client disconnects).
   */
  const parked = useRef<ChatView | undefined>(undefined);
  const [away, setAway] = useState(false);
  const [running, setRunning] = useState(false);
  const runningRef = useRef(false);
  const lastSend = useRef<{ text: string; options: SendOptions } | undefined>(undefined);

  const show = (view: ChatView) => {
    visible.current = view;
    setShown(view);
  };
  const onScreen = (change: (v: ChatView) => ChatView) => show(change(visible.current));
  /** Changes the running reply's view, on screen or parked. */
  const toRun = (change: (v: ChatView) => ChatView) => {
    if (parked.current) parked.current = change(parked.current);
    else onScreen(change);
  };

  /** Leaving the running reply's session: its view keeps taking events out of sight. */
  const park = () => {
    if (!runningRef.current || parked.current) return;
    parked.current = visible.current;
    setAway(true);
  };

  const reset = () => {
    park();
    show(EMPTY_VIEW);
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
    const { session, messages } = await api<Hydrated>(`/api/chat/session?${query}`);
    show({
      ref: {
        sessionId: session.sessionId ?? ref.sessionId,
        sessionFile: session.sessionFile ?? ref.sessionFile,
      },
      messages: normalizeMessages(messages),
      plan: session.plan,
      question: session.pendingQuestions?.[0],
      queue: EMPTY_QUEUE,
    });
  };

  /** One stream event into the running reply's view; a new chat is listed at once (it can be left). */
  const apply = (event: ChatStreamEvent) => {
    toRun((v) => applyChatEvent(v, event));
    if (event.type === "start") onSessionsChanged();
  };

  const run = async (body: Record<string, unknown>) => {
    runningRef.current = true;
    setRunning(true);
    onScreen((v) => ({ ...v, error: undefined, notice: undefined, replyId: undefined }));
    try {
      const response = await request("/api/chat", { method: "POST", body });
      for await (const event of readNdjson<ChatStreamEvent>(response)) apply(event);
    } catch (e) {
      const message = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      toRun((v) => ({ ...v, error: message }));
    } finally {
      toRun((v) => ({ ...v, question: undefined, replyId: undefined }));
      // Ended out of sight: opening that session again reads it from the server.
      parked.current = undefined;
      setAway(false);
      runningRef.current = false;
      setRunning(false);
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
      for await (const event of readNdjson<ChatStreamEvent>(response)) apply(event);
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
