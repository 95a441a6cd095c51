/**
 * One message of the transcript. It is a class with shouldComponentUpdate on the message object, so a
 * streamed delta (which replaces only the last message) re-renders that message alone; Markdown is
 * rendered once per text value.
 */
import { Component, type JSX } from "preact";
import type { ToolPart, UiMessage } from "../../schemas/chat.ts";
import { renderMarkdown } from "./markdown.ts";
import { isError, isText, type Part, toolName } from "./messages.ts";

interface Props {
  message: UiMessage;
  streaming: boolean;
  onRetry?: () => void;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown>;
  if (typeof v.content === "string" && Object.keys(v).every((k) => k === "content" || k === "details"))
    return v.content;
  if (Array.isArray(v.content))
    return (v.content as Record<string, unknown>[]).map((b) => String(b.text ?? "")).join("\n");
  return JSON.stringify(value, null, 2);
}

/** Markdown as safe HTML, rendered again only when its text changes. */
export class Markdown extends Component<{ text: string }> {
  private html = "";
  private source: string | undefined;
  shouldComponentUpdate(next: { text: string }) {
    return next.text !== this.props.text;
  }
  render({ text }: { text: string }) {
    if (text !== this.source) {
      this.source = text;
      this.html = renderMarkdown(text);
    }
    // The HTML is DOMPurify's output (renderMarkdown).
    return <div class="markdown" dangerouslySetInnerHTML={{ __html: this.html }} />;
  }
}

function ThinkingView({ part, streaming }: { part: ToolPart; streaming: boolean }): JSX.Element {
  const text =
    typeof part.output === "string" ? part.output : show((part.input as { thought?: string })?.thought);
  const live = streaming && part.state === "input-streaming";
  return (
    <details class="thinking">
      <summary>{live ? "Thinking…" : "Thought"}</summary>
      <div class="thinking-text">{text}</div>
    </details>
  );
}

function ToolView({ part, streaming }: { part: ToolPart; streaming: boolean }): JSX.Element {
  const state = part.state ?? "";
  const status =
    state === "output-error"
      ? "failed"
      : state === "output-available"
        ? "done"
        : streaming
          ? "running…"
          : "interrupted";
  const output = show(part.output);
  return (
    <details class="tool" data-state={state} data-tool={toolName(part)}>
      <summary>
        <span class="tool-name">{toolName(part)}</span> <span class="badge">{status}</span>
      </summary>
      {part.input !== undefined && (
        <>
          <div class="muted">Input</div>
          <pre>{show(part.input)}</pre>
        </>
      )}
      {output && (
        <>
          <div class="muted">Result</div>
          <pre class="tool-output">{output}</pre>
        </>
      )}
    </details>
  );
}

function PartView({ part, streaming, onRetry }: { part: Part; streaming: boolean; onRetry?: () => void }) {
  if (isText(part)) return part.text ? <Markdown text={part.text} /> : null;
  if (isError(part))
    return (
      <div class="error" role="alert">
        <strong>{part.title ?? "Request failed"}:</strong> {part.message}{" "}
        {onRetry && (
          <button type="button" class="btn btn-small" onClick={onRetry}>
            Retry
          </button>
        )}
      </div>
    );
  if (part.type === "tool-Thinking") return <ThinkingView part={part} streaming={streaming} />;
  if (part.type === "tool-PlanWrite") return null; // the plan card shows it
  return <ToolView part={part} streaming={streaming} />;
}

export class MessageView extends Component<Props> {
  shouldComponentUpdate(next: Props) {
    return next.message !== this.props.message || next.streaming !== this.props.streaming;
  }
  render({ message, streaming, onRetry }: Props) {
    const user = message.role === "user";
    return (
      <article class={`msg ${user ? "msg-user" : "msg-assistant"}`} data-id={message.id}>
        <div class="msg-role">{user ? "You" : "Assistant"}</div>
        {user ? (
          <div class="bubble">{message.parts.filter(isText).map((p) => p.text)}</div>
        ) : (
          message.parts.map((part, i) => (
            <PartView
              key={(part as ToolPart).toolCallId ?? `${part.type}-${i}`}
              part={part}
              streaming={streaming}
              onRetry={onRetry}
            />
          ))
        )}
        {!user && streaming && message.parts.length === 0 && <div class="muted">…</div>}
      </article>
    );
  }
}
