/**
 * `atrium chat` without `-m`: an interactive chat session (the frame and keys are app.ts). A message
 * streams its reply (view.ts); a message sent while a reply runs steers it. A question the model asks
 * is answered by the next line typed (a number, a label, text, or /skip). Ctrl-C aborts the running
 * reply (`POST /api/chat/abort`). Slash commands (/model, /mode, /execute, /refine, ...) are slash.ts.
 */

import type { ChatRequest, Mode } from "../../schemas/chat.ts";
import type { Api } from "../api.ts";
import { TerminalApp } from "../app.ts";
import { style } from "../style.ts";
import { type ChatClient, chatClient, parseAnswer } from "./client.ts";
import { SLASH_COMMANDS, slash } from "./slash.ts";
import { ChatView } from "./view.ts";

export class ChatApp extends TerminalApp {
  readonly client: ChatClient;
  sessionId: string | undefined;
  title: string | undefined;
  model: string | undefined;
  mode: Mode = "agent";
  private running: { view: ChatView; stop: AbortController; aborting: boolean } | undefined;

  constructor(readonly api: Api) {
    super(`${style.bold("atrium chat")} ${style.muted(`· ${api.baseUrl} · /help`)}`, SLASH_COMMANDS);
    this.client = chatClient(api);
  }

  protected busy(): boolean {
    return this.running !== undefined;
  }

  protected stopped(): void {
    this.running?.stop.abort();
  }

  protected status(): string {
    const session = this.sessionId ? `session ${this.sessionId}` : "new session";
    const settings = ` · ${this.mode} · ${this.model ?? "default model"}`;
    const question = this.running?.view.question ? " · answer the question (/skip skips)" : "";
    const state = this.running
      ? this.running.aborting
        ? " · stopping…"
        : `${question || " · replying"} · Ctrl-C stops`
      : "";
    return `${session}${settings}${state}`;
  }

  protected async submit(text: string): Promise<void> {
    const question = this.running?.view.question;
    if (question && this.sessionId && (!text.startsWith("/") || text === "/skip")) {
      const answer = parseAnswer(question, text);
      if (!answer) {
        this.running?.view.note(`not one of the options: ${text}`);
        return;
      }
      this.running?.view.note(`answered: ${answer.kind === "skip" ? "skipped" : (answer.text ?? text)}`);
      this.running!.view.question = undefined;
      await this.client.answer(this.sessionId, question, answer);
      return;
    }
    if (text.startsWith("/")) await slash(this, text);
    else if (this.running && this.sessionId) await this.steer(text);
    else await this.send({ message: text }, text);
  }

  protected interrupt(): void {
    const running = this.running;
    if (!running) return;
    if (running.aborting || !this.sessionId) {
      running.view.note("stopped following the reply");
      running.stop.abort();
      return;
    }
    running.aborting = true;
    running.view.note("stopping…");
    this.client.abort(this.sessionId).catch((error) => this.fail(error));
  }

  /** A message while a reply runs: the runtime queues it as steering and answers one `queue` event. */
  private async steer(text: string): Promise<void> {
    this.running?.view.note(`steering: ${text}`);
    await this.client.send(
      { sessionId: this.sessionId, message: text, streamingBehavior: "steer" },
      (event) => {
        this.running?.view.apply(event);
        this.tui.requestRender();
      },
    );
  }

  /** Sends a request and streams its reply into a new exchange on screen. */
  async send(request: ChatRequest, shown?: string): Promise<void> {
    if (this.running) {
      this.say(style.warn("a reply is running: wait for it, or Ctrl-C to stop it"));
      return;
    }
    const view = new ChatView(shown);
    this.transcript.addChild(view);
    const running = { view, stop: new AbortController(), aborting: false };
    this.running = running;
    this.updateFooter();
    // A plan decision carries no mode: executing leaves plan mode, refining stays in it.
    const body: ChatRequest = request.planAction
      ? { ...request }
      : { ...request, mode: request.mode ?? this.mode };
    if (this.sessionId) body.sessionId = this.sessionId;
    if (this.model) body.model = this.model;
    try {
      await this.client.send(
        body,
        (event) => {
          if (event.type === "start") this.sessionId = event.sessionId;
          if (event.type === "plan") this.mode = event.state.mode;
          view.apply(event);
          this.updateFooter();
        },
        running.stop.signal,
      );
    } catch (error) {
      this.fail(error);
    } finally {
      this.running = undefined;
    }
  }
}

export async function interactive(
  api: Api,
  options: { sessionId?: string; model?: string; mode?: Mode },
): Promise<number> {
  const app = new ChatApp(api);
  app.model = options.model;
  if (options.mode) app.mode = options.mode;
  if (options.sessionId) await slash(app, `/resume ${options.sessionId}`);
  return app.run();
}
