/**
 * The session sidebar: new chat, the sessions newest first (title from the first message, and when it was
 * last used, so chats with the same first words are told apart), delete with confirm.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { shortDate } from "../lib/format.ts";

export interface SessionItem {
  sessionId: string;
  sessionFile?: string;
  title: string;
  updated?: string;
}

/** A sessions-list row in either shape (`{id, title, updatedAt}` or `{id, path, name, firstMessage, modified}`). */
export function sessionItem(raw: Record<string, unknown>): SessionItem {
  const title = (raw.title ?? raw.name ?? raw.firstMessage ?? "") as string;
  return {
    sessionId: String(raw.sessionId ?? raw.id),
    sessionFile: (raw.sessionFile ?? raw.path) as string | undefined,
    title: title.trim() || "New chat",
    updated: (raw.updatedAt ?? raw.modified) as string | undefined,
  };
}

interface Props {
  sessions: SessionItem[];
  current?: string;
  /** The session whose reply is still streaming while another one is open. */
  replying?: string;
  onNew(): void;
  onOpen(item: SessionItem): void;
  onDelete(item: SessionItem): Promise<void>;
}

export function Sidebar({ sessions, current, replying, onNew, onOpen, onDelete }: Props): JSX.Element {
  const [confirming, setConfirming] = useState<string | undefined>();
  return (
    <aside class="sidebar" aria-label="Conversations">
      <button type="button" class="btn btn-primary" onClick={onNew}>
        New chat
      </button>
      {sessions.length === 0 ? (
        <p class="muted">No conversations yet. Your first message starts one.</p>
      ) : (
        <ul class="list sessions">
          {sessions.map((s) => (
            <li key={s.sessionId} aria-current={s.sessionId === current ? "true" : undefined}>
              {confirming === s.sessionId ? (
                <span class="row">
                  <span>Delete “{s.title}”?</span>
                  <button
                    type="button"
                    class="btn btn-small btn-danger"
                    onClick={() => {
                      setConfirming(undefined);
                      void onDelete(s);
                    }}
                  >
                    Delete
                  </button>
                  <button type="button" class="btn btn-small" onClick={() => setConfirming(undefined)}>
                    Cancel
                  </button>
                </span>
              ) : (
                <>
                  <button type="button" class="session-open" title={s.title} onClick={() => onOpen(s)}>
                    <span class="session-title">{s.title}</span>
                    {s.updated ? (
                      <time class="session-date" dateTime={s.updated}>
                        {shortDate(s.updated)}
                      </time>
                    ) : null}
                    {s.sessionId === replying && <span class="badge replying">replying…</span>}
                  </button>
                  <button
                    type="button"
                    class="btn btn-small"
                    aria-label={`Delete ${s.title}`}
                    onClick={() => setConfirming(s.sessionId)}
                  >
                    ✕
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}
