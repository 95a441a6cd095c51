/**
 * The turn being run: POSTs it (with its Idempotency-Key, so a retry follows the same turn), reads the
 * SSE stream and draws each event as it arrives. Only this component re-renders per event, never the
 * session's history above it. Cancel (button or Esc) asks the server to cancel the run.
 */
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, readSse, request } from "../../lib/api.ts";
import { ErrorLine, errorText } from "../common.tsx";
import { applyEvent, initialLive, type LiveState } from "./parts.ts";
import { TurnParts } from "./turn-parts.tsx";

export interface LiveTurnRequest {
  sessionId: string;
  text: string;
  attachmentIds: string[];
  key: string;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

export function LiveTurn(props: { turn: LiveTurnRequest; onDone: () => void }): JSX.Element {
  const [state, setState] = useState<LiveState>(initialLive);
  const [error, setError] = useState<unknown>();
  const [cancelling, setCancelling] = useState(false);
  const runId = useRef<string | undefined>(undefined);
  const box = useRef<HTMLElement>(null);
  const onDone = useRef(props.onDone);
  onDone.current = props.onDone;

  // A long session pushes the new turn below the fold: bring it into view once.
  useEffect(() => box.current?.scrollIntoView?.({ block: "nearest" }), []);

  useEffect(() => {
    const abort = new AbortController();
    const { sessionId, text, attachmentIds, key } = props.turn;
    void (async () => {
      let live = initialLive();
      try {
        const response = await request(`/api/sessions/${encodeURIComponent(sessionId)}/turns`, {
          method: "POST",
          body: { text, ...(attachmentIds.length ? { attachment_ids: attachmentIds } : {}) },
          headers: { "idempotency-key": key, accept: "text/event-stream" },
          signal: abort.signal,
        });
        for await (const frame of readSse(response)) {
          // Spec events carry their name; the AI SDK compat chunks between them do not.
          if (!frame.event) continue;
          live = applyEvent(live, JSON.parse(frame.data));
          runId.current = live.runId;
          setState(live);
        }
      } catch (e) {
        if (!abort.signal.aborted) setError(e);
      }
      if (!abort.signal.aborted) onDone.current();
    })();
    return () => abort.abort();
  }, [props.turn]);

  const cancel = async () => {
    if (!runId.current) return;
    setCancelling(true);
    try {
      await api(`/api/runs/${encodeURIComponent(runId.current)}/cancellation`, { method: "PUT" });
    } catch (e) {
      setError(e);
      setCancelling(false);
    }
  };

  const running = !TERMINAL.has(state.status);
  // Esc cancels while the turn runs. Listening from mount (reading the latest state through refs)
  // means no key press falls between a render and a re-registered listener.
  const onEscape = useRef<() => void>(() => {});
  onEscape.current = () => {
    if (running) void cancel();
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onEscape.current();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  return (
    <article ref={box} class="turn turn-live" aria-busy={running} data-status={state.status}>
      <div class="turn-input pre-wrap">{props.turn.text}</div>
      <TurnParts parts={state.parts} />
      <div class="row turn-status" aria-live="polite">
        <span class={`badge${state.status === "completed" ? " badge-ok" : ""}`} data-testid="turn-status">
          {state.status}
        </span>
        {state.message ? <span class="muted">{state.message}</span> : null}
        {running ? (
          <button
            type="button"
            class="btn btn-danger btn-small"
            onClick={() => void cancel()}
            disabled={!state.runId || cancelling}
            aria-keyshortcuts="Escape"
          >
            {cancelling ? "Cancelling…" : "Cancel turn"}
          </button>
        ) : null}
      </div>
      {state.error ? <p class="error">{state.error}</p> : null}
      <ErrorLine error={error ? errorText(error) : undefined} />
    </article>
  );
}
