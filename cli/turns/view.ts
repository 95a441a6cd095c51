/**
 * One turn on screen, as its events arrive: preparation status (what it waits for), reasoning, the
 * Python (highlighted), its output, tool calls and their results, artifacts with their download URL,
 * the answer (Markdown), usage, and how it ended. The same view draws a committed turn from history
 * (history.ts turns its parts back into events), so live and resumed turns look alike.
 */
import { Container, Markdown, Spacer, Text } from "@mariozechner/pi-tui";
import { count } from "../../common/words.ts";
import type { TurnStreamEvent as TurnEvent } from "../../schemas/turn-stream.ts";
import { bytes, clean, cleanDeep, highlightCode, markdownTheme, preview, style } from "../style.ts";

const GUTTER = style.muted("│ ");

function gutter(lines: string[]): string {
  return lines.map((line) => `${GUTTER}${line}`).join("\n");
}

export class TurnView extends Container {
  runId: string | undefined;
  /** The answer's text so far (every `text` stream, in order). */
  private readonly texts = new Map<string, string>();
  private status: Text | undefined;
  private readonly streams = new Map<string, { text: Text; value: string; step: number }>();
  private readonly answers = new Map<string, Markdown>();
  private readonly tools = new Map<string, { text: Text; head: string }>();
  private readonly childRuns = new Map<string, Text>();

  constructor(
    private readonly baseUrl: string,
    userText: string,
  ) {
    super();
    this.addChild(new Spacer(1));
    this.line(`${style.user("you ›")} ${clean(userText)}`);
  }

  get answer(): string {
    return [...this.texts.values()].join("\n\n");
  }

  /** A line below the turn: a notice of the client's own (reconnecting, cancelling, ...). */
  note(text: string): Text {
    return this.line(style.muted(text));
  }

  private line(text: string): Text {
    const component = new Text(text, 1, 0);
    this.addChild(component);
    return component;
  }

  private stream(id: string, step: number, value: string, draw: (value: string, step: number) => string) {
    let entry = this.streams.get(id);
    if (!entry) {
      entry = { text: this.line(""), value: "", step };
      this.streams.set(id, entry);
    }
    entry.value = value;
    entry.text.setText(draw(value, step));
    return entry;
  }

  private appended(id: string, chunk: string, isDelta: boolean): string {
    return isDelta ? (this.streams.get(id)?.value ?? "") + chunk : chunk;
  }

  /** Draws one event; every string in it is cleaned of terminal escapes first (style.ts). */
  apply(raw: TurnEvent): void {
    const event = cleanDeep(raw);
    switch (event.type) {
      case "turn_status": {
        const waiting = event.message ?? "waiting for the turn to open";
        const text = style.muted(`⋯ preparing: ${waiting}`);
        if (this.status) this.status.setText(text);
        else this.status = this.line(text);
        return;
      }
      case "turn_start":
        if (this.status) this.removeChild(this.status);
        this.status = undefined;
        this.runId = event.runId;
        if (event.delivery === "replay") this.note("(replayed: this turn had already run)");
        return;
      case "step_start":
        this.line(style.muted(`step ${event.step}`));
        return;
      case "step_finish":
        return;
      case "reasoning":
        this.stream(`r:${event.streamId}`, event.step, event.text, (v) => style.thinking(`thinking: ${v}`));
        return;
      case "code":
        this.stream(
          `c:${event.streamId}`,
          event.step,
          this.appended(`c:${event.streamId}`, event.code, event.isDelta),
          (v, step) => `${style.muted(`python · step ${step}`)}\n${gutter(highlightCode(v))}`,
        );
        return;
      case "output":
        this.stream(
          `o:${event.streamId}`,
          event.step,
          this.appended(`o:${event.streamId}`, event.output, event.isDelta),
          (v) => `${style.muted("output")}\n${gutter(v.replace(/\n$/, "").split("\n"))}`,
        );
        return;
      case "text": {
        this.texts.set(event.streamId, event.text);
        let answer = this.answers.get(event.streamId);
        if (!answer) {
          answer = new Markdown("", 1, 0, markdownTheme);
          this.answers.set(event.streamId, answer);
          this.addChild(answer);
        }
        answer.setText(event.text);
        return;
      }
      case "tool_call": {
        const head = `${style.accent("→")} ${event.toolName} ${style.muted(preview(event.input))}`;
        this.tools.set(event.toolCallId, { text: this.line(head), head });
        return;
      }
      case "tool_result": {
        const tool = this.tools.get(event.toolCallId);
        const result = event.error
          ? style.error(`  ✗ ${preview(event.error)}`)
          : style.muted(`  ← ${preview(event.output)}`);
        if (tool) tool.text.setText(`${tool.head}\n${result}`);
        else this.line(`${style.accent("→")} ${event.toolName}\n${result}`);
        return;
      }
      case "artifact":
        this.line(
          `${style.ok("▣ artifact")} ${event.title} (${event.mediaType}, ${bytes(event.byteSize)}): ` +
            `${this.baseUrl}/api/artifacts/${event.artifactId}/content`,
        );
        return;
      case "attachment":
        this.line(style.muted(`attachment ${event.filename} (${bytes(event.byteSize)}) ${event.phase}`));
        return;
      case "skill":
        this.line(style.muted(`skill ${event.name} ${event.version} ${event.phase}`));
        return;
      case "child_progress": {
        const text = style.muted(
          `child ${event.taskLabel}: ${event.state}${event.outcome ? ` — ${event.outcome}` : ""}`,
        );
        const child = this.childRuns.get(event.childId);
        if (child) child.setText(text);
        else this.childRuns.set(event.childId, this.line(text));
        return;
      }
      case "structured_result":
        this.line(`${style.accent("result")} ${event.schemaId}: ${preview(event.value, 400)}`);
        return;
      case "warning":
        this.line(style.warn(`! ${event.message} (${event.code})`));
        return;
      case "usage":
        this.line(style.muted(usageLine(event)));
        return;
      case "turn_finish":
        if (event.status !== "completed") this.line(style.error(`✗ turn ${event.status}`));
        return;
      case "turn_error":
        this.line(style.error(`✗ ${event.code}: ${event.detail ?? event.message}`));
        return;
      case "turn_cancelled":
        this.line(style.warn("Turn cancelled"));
        return;
    }
  }
}

export function usageLine(event: Extract<TurnEvent, { type: "usage" }>): string {
  const u = event.usage ?? {};
  const tokens = `${u.inputTokens ?? 0} in / ${u.outputTokens ?? 0} out tokens`;
  return `usage: ${count(event.iterations, "step")} · ${tokens} · ${count(u.llmCalls ?? 0, "model call")} · ${event.durationMs} ms`;
}
