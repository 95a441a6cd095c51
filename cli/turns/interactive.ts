/**
 * `atrium turns` without `-m`: an interactive session (the frame and keys are app.ts). Each message
 * becomes a turn whose stream renders as it arrives (view.ts). Ctrl-C cancels the running turn through
 * the cancellation route (a second one stops following it). Slash commands are in slash.ts.
 */
import type { Api } from "../api.ts";
import { TerminalApp } from "../app.ts";
import { clean, style } from "../style.ts";
import { type Attachment, type TurnsClient, titleOf, turnsClient } from "./client.ts";
import type { Session } from "./events.ts";
import { SLASH_COMMANDS, slash } from "./slash.ts";
import { runTurn } from "./stream.ts";
import { TurnView } from "./view.ts";

interface Running {
  view: TurnView;
  stop: AbortController;
  runId?: string;
  /** Ctrl-C came before the run had an id: cancel as soon as it has one. */
  cancelWanted: boolean;
  cancelling: boolean;
}

export class TurnsApp extends TerminalApp {
  readonly client: TurnsClient;
  session: Session | undefined;
  pending: Attachment[] = [];
  private running: Running | undefined;
  /** The last turn, when it failed: /retry sends it again (a new turn, so a new Idempotency-Key). */
  private failed: { text: string; attachments: Attachment[] } | undefined;

  constructor(readonly api: Api) {
    super(`${style.bold("atrium turns")} ${style.muted(`· ${api.baseUrl} · /help`)}`, SLASH_COMMANDS);
    this.client = turnsClient(api);
  }

  protected busy(): boolean {
    return this.running !== undefined;
  }

  protected stopped(): void {
    this.running?.stop.abort();
  }

  protected status(): string {
    const session = this.session
      ? clean(`session ${this.session.id} · ${this.session.title}`)
      : "new session (starts with your first message)";
    const attached = this.pending.length
      ? ` · attached: ${this.pending.map((a) => a.filename).join(", ")}`
      : "";
    const state = this.running
      ? this.running.cancelling
        ? " · cancelling…"
        : " · running · Ctrl-C cancels"
      : "";
    return `${session}${attached}${state}`;
  }

  protected async submit(text: string): Promise<void> {
    if (text.startsWith("/")) await slash(this, text);
    else if (this.running) this.say(style.warn("a turn is running: wait for it, or Ctrl-C to cancel it"));
    else await this.turn(text);
  }

  protected interrupt(): void {
    const running = this.running;
    if (!running) return;
    if (running.cancelling || running.cancelWanted) {
      running.view.note("stopped following the turn");
      running.stop.abort();
      return;
    }
    if (running.runId) this.cancel(running);
    else {
      running.cancelWanted = true;
      running.view.note("cancelling as soon as the turn starts…");
    }
  }

  private cancel(running: Running): void {
    if (!running.runId || running.cancelling) return;
    running.cancelling = true;
    running.view.note("cancelling…");
    this.client.cancel(running.runId).then(
      () => this.updateFooter(),
      (error) => this.fail(error),
    );
    this.updateFooter();
  }

  /** /retry: the failed turn's message and attachments, sent again under a new key. */
  async retry(): Promise<void> {
    const failed = this.failed;
    if (!failed) this.say(style.muted("no failed turn to retry"));
    else if (this.running) this.say(style.warn("a turn is running: wait for it, or Ctrl-C to cancel it"));
    else await this.turn(failed.text, failed.attachments);
  }

  private async turn(text: string, again?: Attachment[]): Promise<void> {
    if (!this.session) this.session = await this.client.createSession(titleOf(text));
    const attachments = again ?? this.pending;
    if (!again) this.pending = [];
    this.failed = undefined;
    const view = new TurnView(this.api.baseUrl, text);
    this.transcript.addChild(view);
    const running: Running = { view, stop: new AbortController(), cancelWanted: false, cancelling: false };
    this.running = running;
    this.updateFooter();
    try {
      await runTurn({
        api: this.api,
        sessionId: this.session.id,
        input: attachments.length ? { text, attachment_ids: attachments.map((a) => a.id) } : { text },
        signal: running.stop.signal,
        onReconnect: (attempt, why) => {
          view.note(`connection lost (${why}); reconnecting, attempt ${attempt}`);
          this.tui.requestRender();
        },
        onEvent: (event) => {
          view.apply(event);
          if (event.type === "turn_error") {
            this.failed = { text, attachments };
            view.note("/retry sends this message again");
          }
          if (event.type === "turn_start") {
            running.runId = event.runId;
            if (running.cancelWanted) this.cancel(running);
          }
          this.tui.requestRender();
        },
      });
    } catch (error) {
      this.fail(error);
    } finally {
      this.running = undefined;
    }
  }
}

export async function interactive(api: Api, options: { sessionId?: string }): Promise<number> {
  const app = new TurnsApp(api);
  if (options.sessionId) await slash(app, `/resume ${options.sessionId}`);
  return app.run();
}
