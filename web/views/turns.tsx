/**
 * The Turns view (#/turns): the turn service's sessions in a sidebar (create one by title), and the
 * open session's committed turns (code, output, reasoning, tool calls, artifacts to download), the
 * turn running now streamed below them, the composer with attachments, and the workspace files.
 */

import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Session, TurnRecord } from "../../schemas/turns.ts";
import { api } from "../lib/api.ts";
import { shortDate } from "../lib/format.ts";
import { ErrorLine, randomKey, useLoad } from "./common.tsx";
import { Composer } from "./turns/composer.tsx";
import { FilesPanel } from "./turns/files-panel.tsx";
import { forgetLiveTurn, liveTurnOf, rememberLiveTurn } from "./turns/live-store.ts";
import { LiveTurn, type LiveTurnRequest } from "./turns/live-turn.tsx";
import { partsFromHistory } from "./turns/parts.ts";
import { TurnParts } from "./turns/turn-parts.tsx";
import "./views.css";

const FINISHED = new Set(["completed", "failed", "cancelled"]);

function NewSession({ onCreated }: { onCreated: (s: Session) => void }): JSX.Element {
  const [title, setTitle] = useState("");
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const created = await api<Session>("/api/sessions", {
            method: "POST",
            body: { title: title.trim() || "Untitled" },
          });
          setTitle("");
          setError(undefined);
          onCreated(created);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <label class="field">
        <span>New session title</span>
        <input value={title} maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <button type="submit" class="btn btn-primary">
        New session
      </button>
      <ErrorLine error={error} />
    </form>
  );
}

/** A committed turn; a failed one offers Retry: its input sent again as a new turn (a new key). */
function CommittedTurn({ turn, onRetry }: { turn: TurnRecord; onRetry?: () => void }): JSX.Element {
  return (
    <article class="turn" data-status={turn.status}>
      <div class="turn-input pre-wrap">{turn.input.text}</div>
      <TurnParts parts={partsFromHistory(turn)} />
      <div class="row turn-status">
        <span class={`badge${turn.status === "completed" ? " badge-ok" : ""}`}>{turn.status}</span>
        {turn.durationMs !== null ? <span class="muted">{turn.durationMs} ms</span> : null}
      </div>
      {turn.error ? (
        <div class="row">
          <p class="error">{turn.error.message}</p>
          {onRetry ? (
            <button type="button" class="btn btn-small" onClick={onRetry}>
              Retry
            </button>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

function SessionPane({ session }: { session: Session }): JSX.Element {
  const history = useLoad<{ items: TurnRecord[] }>(
    `/api/sessions/${encodeURIComponent(session.id)}/turns?limit=200`,
  );
  // A turn started here and still running when the session was left comes back live.
  const [live, setLive] = useState<LiveTurnRequest | undefined>(() => liveTurnOf(session.id));
  const [finished, setFinished] = useState(0);

  const start = (turn: LiveTurnRequest) => {
    rememberLiveTurn(turn);
    setLive(turn);
  };
  const done = async () => {
    forgetLiveTurn(session.id);
    await history.reload();
    setLive(undefined);
    setFinished((n) => n + 1);
  };
  // The live turn is drawn from its stream; history lists it too while it runs.
  const committed = history.data?.items.filter((t) => !live || FINISHED.has(t.status)) ?? [];

  return (
    <div class="turns-main">
      <h2 class="view-title">{session.title}</h2>
      <ErrorLine error={history.error} />
      <section class="turn-list" aria-label="Turns">
        {history.data?.items.length === 0 && !live ? (
          <p class="empty">
            No turns yet. Send a message: with no model configured, Atrium runs the message's fenced Python
            block in the sandbox and shows what it printed.
          </p>
        ) : null}
        {committed.map((t, i) => (
          <CommittedTurn
            key={t.runId}
            turn={t}
            // The last turn, failed, while nothing runs: Retry sends its input again under a new key (the
            // old key would replay the failure).
            onRetry={
              t.status === "failed" && i === committed.length - 1 && !live
                ? () =>
                    start({
                      sessionId: session.id,
                      text: t.input.text,
                      attachmentIds: t.input.attachmentIds,
                      key: randomKey(),
                    })
                : undefined
            }
          />
        ))}
        {live ? <LiveTurn key={live.key} turn={live} onDone={() => void done()} /> : null}
      </section>
      <Composer
        busy={live !== undefined}
        onSend={(text, attachmentIds) =>
          start({ sessionId: session.id, text, attachmentIds, key: randomKey() })
        }
      />
      <FilesPanel refresh={finished} />
    </div>
  );
}

export default function TurnsView(): JSX.Element {
  const sessions = useLoad<{ items: Session[] }>("/api/sessions?limit=200");
  const [openId, setOpenId] = useState<string>();
  const open = sessions.data?.items.find((s) => s.id === openId);
  return (
    <div class="views-split turns-view">
      <aside class="views-side" aria-label="Turn sessions">
        <h2 class="view-title">Turns</h2>
        <NewSession
          onCreated={async (s) => {
            await sessions.reload();
            setOpenId(s.id);
          }}
        />
        <ErrorLine error={sessions.error} />
        {sessions.data?.items.length === 0 ? <p class="empty">No sessions yet.</p> : null}
        <ul class="list session-list">
          {sessions.data?.items.map((s) => (
            <li key={s.id}>
              <button
                type="button"
                class="linklike"
                aria-current={s.id === openId ? "true" : undefined}
                onClick={() => setOpenId(s.id)}
              >
                <span class="session-title">{s.title}</span>
                <time class="session-date" dateTime={s.updatedAt}>
                  {shortDate(s.updatedAt)}
                </time>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      {open ? (
        <SessionPane key={open.id} session={open} />
      ) : (
        <div class="turns-main">
          <p class="empty">
            A session holds turns: each runs Python in a sandbox, step by step. Create one or pick one on the
            left.
          </p>
        </div>
      )}
    </div>
  );
}
