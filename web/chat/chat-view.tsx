/**
 * The chat page: the session sidebar, a toolbar (model, thinking level, mode, export), the transcript
 * with the plan and question cards, notices and errors in place, and the composer.
 */
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Mode } from "../../schemas/chat.ts";
import { api } from "../lib/api.ts";
import { PlanCard, QuestionCard } from "./cards.tsx";
import { Composer } from "./composer.tsx";
import { download, toJson, toMarkdown } from "./export.ts";
import { MessageView } from "./message-view.tsx";
import {
  type Catalog,
  fitLevel,
  initialModelKey,
  levelLabel,
  loadCatalog,
  onlyOffline,
  type PickerModel,
  thinkingLevels,
} from "./models.ts";
import { SetupCard } from "./setup-card.tsx";
import { type SessionItem, Sidebar, sessionItem } from "./sidebar.tsx";
import { useChat } from "./use-chat.ts";

export function ChatView(): JSX.Element {
  const [sessions, setSessions] = useState<SessionItem[]>([]);
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  const [modelKey, setModelKey] = useState<string>("");
  const [thinking, setThinking] = useState<string>("medium");
  const [mode, setMode] = useState<Mode>("agent");
  const [pageError, setPageError] = useState<string | undefined>();
  const transcript = useRef<HTMLDivElement>(null);

  const refreshSessions = () =>
    api<{ sessions: Record<string, unknown>[] }>("/api/chat/sessions")
      .then((r) => setSessions(r.sessions.map(sessionItem)))
      .catch((e: Error) => setPageError(e.message));
  const chat = useChat(() => void refreshSessions());

  useEffect(() => {
    void refreshSessions();
    loadCatalog()
      .then((c) => {
        setCatalog(c);
        setModelKey(initialModelKey(c));
        if (c.defaultThinkingLevel) setThinking(c.defaultThinkingLevel);
      })
      .catch((e: Error) => setPageError(e.message));
  }, []);

  // Follow the stream to the bottom unless the reader scrolled up.
  useEffect(() => {
    const el = transcript.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 200) el.scrollTop = el.scrollHeight;
  }, [chat.messages]);

  const model = catalog?.models.find((m) => m.key === modelKey);
  const levels = thinkingLevels(model);
  const level = fitLevel(levels, thinking);
  const options = () => ({
    mode,
    ...(model
      ? {
          model: {
            provider: model.provider,
            id: model.id,
            ...(levels.length ? { thinkingLevel: level } : {}),
          },
        }
      : {}),
  });
  const title = sessions.find((s) => s.sessionId === chat.session.sessionId)?.title ?? "Conversation";

  const pick = async (m: PickerModel) => {
    await api("/api/chat/settings", {
      method: "POST",
      body: { settings: { defaultProvider: m.provider, defaultModel: m.id } },
    });
    setCatalog((c) => (c ? { ...c, models: [m, ...c.models.filter((x) => x.key !== m.key)] } : c));
    setModelKey(m.key);
  };

  const deleteSession = async (s: SessionItem) => {
    try {
      await api(`/api/chat/session?sessionId=${encodeURIComponent(s.sessionId)}`, { method: "DELETE" });
      if (s.sessionId === chat.session.sessionId) chat.reset();
      await refreshSessions();
    } catch (e) {
      setPageError((e as Error).message);
    }
  };

  return (
    <div class="chat">
      <Sidebar
        sessions={sessions}
        current={chat.session.sessionId}
        replying={chat.replyingElsewhere}
        onNew={chat.reset}
        onOpen={(s) => void chat.open(s).catch((e: Error) => setPageError(e.message))}
        onDelete={deleteSession}
      />
      <section class="main-pane" aria-label="Conversation">
        <div class="toolbar">
          <label class="row">
            <span>Model</span>
            <select value={modelKey} onChange={(e) => setModelKey((e.target as HTMLSelectElement).value)}>
              {catalog?.models.map((m) => (
                <option key={m.key} value={m.key}>
                  {m.name || m.key}
                  {m.available === false ? " (unavailable)" : ""}
                </option>
              ))}
            </select>
          </label>
          {levels.length > 0 && (
            <label class="row">
              <span>Thinking</span>
              <select value={level} onChange={(e) => setThinking((e.target as HTMLSelectElement).value)}>
                {levels.map((l) => (
                  <option key={l} value={l}>
                    {levelLabel(l)}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label class="row">
            <span>Mode</span>
            <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as Mode)}>
              <option value="agent">Agent</option>
              <option value="plan">Plan</option>
              <option value="harness">Harness</option>
            </select>
          </label>
          <span class="spacer" />
          <button
            type="button"
            class="btn btn-small"
            disabled={chat.messages.length === 0}
            onClick={() => download(`${title}.md`, "text/markdown", toMarkdown(title, chat.messages))}
          >
            Export Markdown
          </button>
          <button
            type="button"
            class="btn btn-small"
            disabled={chat.messages.length === 0}
            onClick={() =>
              download(
                `${title}.json`,
                "application/json",
                toJson(chat.session as Record<string, unknown>, title, chat.messages),
              )
            }
          >
            Export JSON
          </button>
        </div>
        <div class="transcript" ref={transcript} aria-live="polite" aria-busy={chat.streaming}>
          {pageError && (
            <p class="error" role="alert">
              {pageError}
            </p>
          )}
          {catalog && onlyOffline(catalog) && <SetupCard onPick={pick} />}
          {chat.messages.length === 0 && (
            <p class="empty">Ask anything. Plan mode drafts steps before acting.</p>
          )}
          {chat.messages.map((m, i) => (
            <MessageView
              key={m.id}
              message={m}
              streaming={chat.streaming && i === chat.messages.length - 1}
              onRetry={() => void chat.retry()}
            />
          ))}
          {chat.plan && (
            <PlanCard
              plan={chat.plan}
              busy={chat.streaming}
              onExecute={() => void chat.planAction("execute", options())}
              onRefine={(text) => void chat.planAction("refine", options(), text)}
            />
          )}
          {chat.question && (
            <QuestionCard question={chat.question} onAnswer={(v) => chat.answer(chat.question!, v)} />
          )}
          {chat.notice && <p class="notice">{chat.notice}</p>}
          {chat.error && !chat.streaming && (
            <div class="error" role="alert">
              {chat.error}{" "}
              <button type="button" class="btn btn-small" onClick={() => void chat.retry()}>
                Retry
              </button>
            </div>
          )}
        </div>
        {(chat.queue.steering.length > 0 || chat.queue.followUp.length > 0) && (
          <p class="queue">Queued: {[...chat.queue.steering, ...chat.queue.followUp].join(" · ")}</p>
        )}
        <Composer
          streaming={chat.streaming}
          onSend={(text) => void chat.send(text, options())}
          onAbort={() => void chat.abort()}
        />
      </section>
    </div>
  );
}
