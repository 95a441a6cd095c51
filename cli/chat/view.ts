/**
 * One chat exchange on screen: the answer as it streams (Markdown), thinking collapsed to one line,
 * tool calls with their results, plan todos, retries, compaction and queue notices, and a question the
 * model asks (answered at the prompt). When `done` comes, its message (the whole turn) is drawn again
 * from its parts, the same way a resumed session's messages are, so live and resumed look alike.
 */
import { Container, Markdown, Spacer, Text } from "@mariozechner/pi-tui";
import { count } from "../../common/words.ts";
import type {
  ChatStreamEvent as ChatEvent,
  MessagePart,
  PlanState,
  ChatQuestion as Question,
  ToolPart,
} from "../../schemas/chat.ts";
import { clean, cleanDeep, markdownTheme, preview, style } from "../style.ts";

/** A tool call or thinking part (text and error parts have their own types). */
function isToolPart(part: MessagePart): part is ToolPart {
  return part.type.startsWith("tool-");
}

type Block =
  | { kind: "text"; value: string; component: Markdown }
  | { kind: "thinking"; value: string; component: Text }
  | { kind: "other"; component: Text };

/** What a tool returned, on one line: a shell's output, a file tool's content, or the raw value. */
function resultOf(part: ToolPart): string {
  const output = part.output as
    | { output?: unknown; content?: unknown; exitCode?: unknown }
    | string
    | undefined;
  if (output && typeof output === "object") {
    if (typeof output.output === "string")
      return `${preview(output.output)} (exit ${output.exitCode ?? "?"})`;
    if (typeof output.content === "string") return preview(output.content);
  }
  return preview(output ?? "");
}

function toolName(part: ToolPart): string {
  return part.type.slice("tool-".length);
}

export function questionText(question: Question): string {
  const lines = [`${style.accent("?")} ${style.bold(question.prompt)}`];
  question.options.forEach((option, i) => {
    lines.push(`  ${style.accent(`${i + 1}.`)} ${option.label}`);
  });
  const how =
    question.kind === "text"
      ? "type your answer"
      : question.kind === "multi"
        ? "type the numbers, e.g. 1,3"
        : "type a number";
  lines.push(style.muted(`  ${how} and Enter · /skip skips`));
  return lines.join("\n");
}

export function planText(plan: PlanState): string {
  const head = `plan ${plan.completed}/${plan.total}${plan.executing ? " · executing" : ""}`;
  const todos = plan.todos.map((t) => `  ${t.completed ? style.ok("[x]") : "[ ]"} ${t.step}. ${t.text}`);
  const hint = plan.pendingDecision ? [style.muted("  /execute runs it · /refine TEXT re-plans")] : [];
  return [style.accent(head), ...todos, ...hint].join("\n");
}

export class ChatView extends Container {
  /** The question waiting for an answer, if the model asked one. */
  question: Question | undefined;
  private blocks: Block[] = [];
  private readonly tools = new Map<string, Text>();
  private plan: Text | undefined;
  private queue: Text | undefined;
  private readonly head: number;

  constructor(userText?: string) {
    super();
    this.addChild(new Spacer(1));
    if (userText !== undefined) this.addChild(new Text(`${style.user("you ›")} ${clean(userText)}`, 1, 0));
    this.head = this.children.length;
  }

  private other(text: string): Text {
    const component = new Text(text, 1, 0);
    this.blocks.push({ kind: "other", component });
    this.addChild(component);
    return component;
  }

  private text(delta: string): void {
    const last = this.blocks.at(-1);
    if (last?.kind === "text") {
      last.value += delta;
      last.component.setText(last.value);
      return;
    }
    const component = new Markdown(delta, 1, 0, markdownTheme);
    this.blocks.push({ kind: "text", value: delta, component });
    this.addChild(component);
  }

  /** `text` is the thinking so far (the stream sends it accumulated, not as deltas). */
  private thinking(text: string): void {
    let last = this.blocks.at(-1);
    if (last?.kind !== "thinking") {
      last = { kind: "thinking", value: "", component: new Text("", 1, 0) };
      this.blocks.push(last);
      this.addChild(last.component);
    }
    last.value = text;
    const words = last.value.trim().split(/\s+/).filter(Boolean).length;
    last.component.setText(
      style.thinking(`▸ thinking · ${count(words, "word")}: ${preview(last.value, 60)}`),
    );
  }

  private tool(part: ToolPart): void {
    if (part.type === "tool-Thinking") {
      const thought = (part.input as { thought?: unknown } | undefined)?.thought;
      this.thinking(typeof thought === "string" ? thought : String(part.output ?? ""));
      return;
    }
    const head = `${style.accent("→")} ${toolName(part)} ${style.muted(preview(part.input ?? "", 120))}`;
    const result =
      part.state === "output-error" || part.isError
        ? `\n${style.error(`  ✗ ${resultOf(part)}`)}`
        : part.state === "output-available"
          ? `\n${style.muted(`  ← ${resultOf(part)}`)}`
          : "";
    const text = `${head}${result}`;
    const existing = this.tools.get(part.toolCallId);
    if (existing) existing.setText(text);
    else this.tools.set(part.toolCallId, this.other(text));
    if (part.awaitingAnswer && part.question) {
      this.question = part.question;
      this.other(questionText(part.question));
    } else if (this.question?.toolCallId === part.toolCallId && part.state !== "input-available") {
      this.question = undefined;
    }
  }

  /** A line of the client's own under this exchange. */
  note(text: string): void {
    this.other(style.muted(text));
  }

  /** Draws one event; every string in it is cleaned of terminal escapes first (style.ts). */
  apply(raw: ChatEvent): void {
    const event = cleanDeep(raw);
    switch (event.type) {
      case "delta":
        this.text(event.text);
        return;
      case "thinking":
        this.thinking(event.text);
        return;
      case "tool":
        this.tool(event.part);
        return;
      case "plan":
        if (this.plan) this.plan.setText(planText(event.state));
        else this.plan = this.other(planText(event.state));
        return;
      case "queue": {
        const text = style.muted(
          `queued: ${event.steering.length} steering, ${event.followUp.length} follow-up`,
        );
        if (this.queue) this.queue.setText(text);
        else this.queue = this.other(text);
        return;
      }
      case "compaction":
        this.note(event.phase === "start" ? `compacting (${event.reason})…` : "compacted");
        return;
      case "retry":
        if (event.phase === "start")
          this.note(
            `retry ${event.attempt}/${event.maxAttempts ?? "?"} in ${event.delayMs ?? 0} ms: ${event.errorMessage}`,
          );
        else if (!event.success) this.other(style.error(`✗ retries failed: ${event.finalError ?? ""}`));
        return;
      case "done":
        this.question = undefined;
        // The whole turn in one message: drawn again from its parts (what streamed stays otherwise).
        if (Array.isArray(event.message?.parts)) this.redraw(event.message.parts);
        return;
      case "error":
        this.question = undefined;
        this.other(style.error(`✗ ${event.message}`));
        return;
      default:
        return;
    }
  }

  /** Draws a finished message from its parts, in place of what streamed (the plan stays). */
  redraw(raw: MessagePart[]): void {
    const parts = cleanDeep(raw);
    this.children.splice(this.head);
    this.blocks = [];
    this.tools.clear();
    const plan = this.plan;
    this.plan = undefined;
    this.queue = undefined;
    for (const part of parts) {
      if (part.type === "text") this.text((part as { text: string }).text);
      else if (part.type === "error") {
        const { title, message } = part as { title?: string; message: string };
        this.other(style.error(`✗ ${title ? `${title}: ` : ""}${message}`));
      } else if (isToolPart(part)) this.tool({ ...part, awaitingAnswer: false });
    }
    if (plan) {
      this.plan = plan;
      this.addChild(plan);
    }
  }
}
