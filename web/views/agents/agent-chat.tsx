/**
 * The chat pane over the agents WebSocket (`/v1/chat?target_id=…&target_type=agent|fleet`): connects
 * when a target is picked, sends `{type: "message", content}`, and groups the streamed reply into one
 * contribution per agent and step, each labelled with the agent's name and its phase in the pattern (a
 * fleet's members answer in turn) and rendered as Markdown. The reply's closing frame names no agent: it
 * settles the reply and adds nothing. The transcript follows new text unless the reader scrolled up. An
 * agent's MCP tool calls (`tool_call`, completed by `tool_result`) show as collapsible tool entries,
 * notices (an MCP server it could not use) and error frames in place; "End session" sends `end_session`.
 */
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Markdown } from "../../chat/message-view.tsx";

export interface ChatTarget {
  id: string;
  type: "agent" | "fleet";
  name: string;
}

type Entry =
  | { kind: "user"; key: string; text: string }
  | { kind: "agent"; key: string; agent: string; phase: string; text: string; complete: boolean }
  | { kind: "error"; key: string; text: string }
  | { kind: "notice"; key: string; text: string }
  | {
      kind: "tool";
      key: string;
      agent: string;
      name: string;
      args: unknown;
      result?: string;
      isError?: boolean;
    };

interface Frame {
  type: string;
  session_id?: string;
  message_id?: string;
  chunk?: string;
  content?: string;
  is_complete?: boolean;
  code?: string;
  message?: string;
  tool_call_id?: string;
  name?: string;
  arguments?: unknown;
  is_error?: boolean;
  metadata?: { agent_id?: string; agent_name?: string; phase?: string; step?: number };
}

/** An MCP tool call starts an entry; its result (same tool_call_id) completes it. */
function addToolFrame(entries: Entry[], frame: Frame): Entry[] {
  const key = `tool|${frame.message_id}|${frame.tool_call_id}`;
  if (frame.type === "tool_call")
    return [
      ...entries,
      {
        kind: "tool",
        key,
        agent: frame.metadata?.agent_name ?? "agent",
        name: frame.name ?? "",
        args: frame.arguments,
      },
    ];
  return entries.map((e) =>
    e.key === key && e.kind === "tool" ? { ...e, result: frame.content ?? "", isError: frame.is_error } : e,
  );
}

function socketUrl(target: ChatTarget): string {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const query = `target_id=${encodeURIComponent(target.id)}&target_type=${target.type}`;
  return `${scheme}://${location.host}/v1/chat?${query}`;
}

/** Adds a frame's piece to its contribution (same message, agent and step), or starts a new one. */
function addFrame(entries: Entry[], frame: Frame): Entry[] {
  const meta = frame.metadata ?? {};
  const key = `${frame.message_id}|${meta.agent_id ?? ""}|${meta.step ?? ""}`;
  const piece = frame.chunk ?? frame.content ?? "";
  const complete = frame.type === "response" || frame.is_complete === true;
  if (!meta.agent_name && !piece)
    // The reply's last frame (who spoke, the pattern) closes every contribution of its message.
    return entries.map((e) =>
      e.kind === "agent" && e.key.startsWith(`${frame.message_id}|`) ? { ...e, complete: true } : e,
    );
  const at = entries.findIndex((e) => e.key === key);
  if (at >= 0) {
    const found = entries[at] as Extract<Entry, { kind: "agent" }>;
    const next = [...entries];
    next[at] = { ...found, text: found.text + piece, complete };
    return next;
  }
  const agent = meta.agent_name ?? "agent";
  return [...entries, { kind: "agent", key, agent, phase: meta.phase ?? "", text: piece, complete }];
}

export function AgentChat({ target }: { target: ChatTarget }): JSX.Element {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [state, setState] = useState<"connecting" | "connected" | "closed">("connecting");
  const [waiting, setWaiting] = useState(false);
  const [text, setText] = useState("");
  const socket = useRef<WebSocket | undefined>(undefined);
  const transcript = useRef<HTMLOListElement>(null);
  /** Set when the person sends: their message and the reply come into view even if they scrolled up. */
  const follow = useRef(false);

  // Follow new text to the bottom unless the reader scrolled up to read something earlier.
  useEffect(() => {
    const el = transcript.current;
    if (!el) return;
    if (follow.current || el.scrollHeight - el.scrollTop - el.clientHeight < 200)
      el.scrollTop = el.scrollHeight;
    follow.current = false;
  }, [entries]);

  useEffect(() => {
    const ws = new WebSocket(socketUrl(target));
    socket.current = ws;
    let count = 0;
    const push = (entry: { kind: "error" | "notice"; text: string }) =>
      setEntries((list) => [...list, { ...entry, key: `e${count++}` } as Entry]);
    ws.onmessage = (event) => {
      const frame = JSON.parse(String(event.data)) as Frame;
      if (frame.type === "connected") setState("connected");
      else if (frame.type === "stream" || frame.type === "response") {
        setEntries((list) => addFrame(list, frame));
        if (frame.type === "response" || frame.is_complete) setWaiting(false);
      } else if (frame.type === "tool_call" || frame.type === "tool_result") {
        setEntries((list) => addToolFrame(list, frame));
      } else if (frame.type === "notice") {
        push({ kind: "notice", text: frame.message ?? "" });
      } else if (frame.type === "error") {
        push({ kind: "error", text: `${frame.code}: ${frame.message}` });
        setWaiting(false);
      }
    };
    ws.onclose = (event) => {
      setState("closed");
      setWaiting(false);
      if (event.code !== 1000)
        push({ kind: "error", text: `Connection closed (${event.code}) ${event.reason}` });
    };
    return () => ws.close(1000);
  }, [target]);

  const send = () => {
    const content = text.trim();
    if (!content || state !== "connected" || waiting) return;
    socket.current?.send(JSON.stringify({ type: "message", content }));
    setEntries((list) => [...list, { kind: "user", key: `u${list.length}-${Date.now()}`, text: content }]);
    setText("");
    setWaiting(true);
    follow.current = true;
  };

  return (
    <section class="panel agent-chat" aria-labelledby="agent-chat-title">
      <div class="row">
        <h3 id="agent-chat-title">
          Chat with {target.name} <span class="muted">({target.type})</span>
        </h3>
        <span class="badge" data-testid="agent-chat-state">
          {state}
        </span>
        <button
          type="button"
          class="btn btn-small"
          disabled={state !== "connected"}
          onClick={() => socket.current?.send(JSON.stringify({ type: "end_session" }))}
        >
          End session
        </button>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the transcript scrolls, so keyboard users must reach it */}
      <ol class="agent-transcript" aria-live="polite" aria-label="Conversation" tabIndex={0} ref={transcript}>
        {entries.map((e) => (
          <li
            key={e.key}
            class={`agent-entry agent-entry-${e.kind}`}
            data-agent={e.kind === "agent" ? e.agent : undefined}
          >
            {e.kind === "tool" ? (
              <details class="tool" data-state={e.isError ? "output-error" : "output-available"}>
                <summary>
                  {e.agent} <span class="muted">called</span> <code>{e.name}</code>{" "}
                  <span class="badge">
                    {e.result === undefined ? "running" : e.isError ? "error" : "done"}
                  </span>
                </summary>
                <pre class="pre-wrap">{JSON.stringify(e.args, null, 2)}</pre>
                {e.result !== undefined && <pre class="pre-wrap">{e.result}</pre>}
              </details>
            ) : e.kind === "agent" ? (
              <div class="agent-label">
                {e.agent}
                {e.phase ? <span class="muted"> · {e.phase}</span> : null}
              </div>
            ) : e.kind === "user" ? (
              <div class="agent-label">You</div>
            ) : null}
            {e.kind === "agent" ? (
              <Markdown text={e.text} />
            ) : (
              e.kind !== "tool" && (
                <div class={`pre-wrap${e.kind === "error" ? " error" : e.kind === "notice" ? " muted" : ""}`}>
                  {e.text}
                </div>
              )
            )}
          </li>
        ))}
      </ol>
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <label class="sr-only" for="agent-message">
          Message to {target.name} (Enter sends, Shift+Enter for a new line)
        </label>
        <textarea
          id="agent-message"
          rows={2}
          placeholder={`Message ${target.name}…`}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
        <button
          type="submit"
          class="btn btn-primary"
          disabled={state !== "connected" || waiting || !text.trim()}
        >
          {waiting ? "Answering…" : "Send"}
        </button>
      </form>
    </section>
  );
}
