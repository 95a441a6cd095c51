/**
 * `atrium turns` without `-m`: an interactive session on pi-tui (pi's own terminal UI library: a
 * differential renderer, a multi-line editor with history and slash-command completion). Each message
 * becomes a turn whose stream renders as it arrives (view.ts). Ctrl-C cancels the running turn through
 * the cancellation route; at the prompt it arms, and a second Ctrl-C exits (so does Ctrl-D on an empty
 * prompt). Slash commands are in slash.ts.
 */
import {
  CombinedAutocompleteProvider,
  Container,
  Editor,
  matchesKey,
  ProcessTerminal,
  Text,
  TUI,
} from "@mariozechner/pi-tui";
import { type Api, ApiError } from "../api.ts";
import { editorTheme, style } from "../style.ts";
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

export class TurnsApp {
  readonly tui = new TUI(new ProcessTerminal());
  readonly client: TurnsClient;
  readonly transcript = new Container();
  session: Session | undefined;
  pending: Attachment[] = [];
  private readonly footer = new Text("", 1, 0);
  private readonly editor = new Editor(this.tui, editorTheme);
  private running: Running | undefined;
  private exitArmed = false;
  private finish: ((code: number) => void) | undefined;

  constructor(readonly api: Api) {
    this.client = turnsClient(api);
    const header = new Text(`${style.bold("atrium turns")} ${style.muted(`· ${api.baseUrl} · /help`)}`, 1, 0);
    this.tui.addChild(header);
    this.tui.addChild(this.transcript);
    this.tui.addChild(this.footer);
    this.tui.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.editor.setAutocompleteProvider(new CombinedAutocompleteProvider(SLASH_COMMANDS, process.cwd()));
    this.editor.onSubmit = (text) => void this.submit(text);
    this.tui.addInputListener((data) => {
      if (matchesKey(data, "ctrl+c")) {
        this.interrupt();
        return { consume: true };
      }
      if (matchesKey(data, "ctrl+d") && !this.editor.getText() && !this.running) {
        this.exit(0);
        return { consume: true };
      }
      return undefined;
    });
    this.updateFooter();
  }

  run(): Promise<number> {
    return new Promise((resolve) => {
      this.finish = resolve;
      for (const signal of ["SIGTERM", "SIGHUP"] as const) process.once(signal, () => this.exit(0));
      this.tui.start();
    });
  }

  exit(code: number): void {
    this.running?.stop.abort();
    this.tui.stop();
    this.finish?.(code);
  }

  /** A line of the client's own in the transcript (command output, errors). */
  say(text: string): void {
    this.transcript.addChild(new Text(text, 1, 0));
    this.tui.requestRender();
  }

  fail(error: unknown): void {
    if (error instanceof ApiError) this.say(style.error(`✗ ${error.code}: ${error.message}`));
    else this.say(style.error(`✗ ${(error as Error).message ?? String(error)}`));
  }

  updateFooter(): void {
    const session = this.session
      ? `session ${this.session.id} · ${this.session.title}`
      : "new session (starts with your first message)";
    const attached = this.pending.length
      ? ` · attached: ${this.pending.map((a) => a.filename).join(", ")}`
      : "";
    const state = this.running
      ? this.running.cancelling
        ? " · cancelling…"
        : " · running · Ctrl-C cancels"
      : this.exitArmed
        ? " · press Ctrl-C again to exit"
        : "";
    this.footer.setText(style.muted(`${session}${attached}${state}`));
    this.tui.requestRender();
  }

  private async submit(text: string): Promise<void> {
    if (!text) return;
    this.exitArmed = false;
    this.editor.addToHistory(text);
    try {
      if (text.startsWith("/")) await slash(this, text);
      else if (this.running) this.say(style.warn("a turn is running: wait for it, or Ctrl-C to cancel it"));
      else await this.turn(text);
    } catch (error) {
      this.fail(error);
    }
    this.updateFooter();
  }

  private interrupt(): void {
    const running = this.running;
    if (!running) {
      if (this.editor.getText()) this.editor.setText("");
      else if (this.exitArmed) {
        this.exit(0);
        return;
      } else this.exitArmed = true;
      this.updateFooter();
      return;
    }
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
    this.updateFooter();
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

  private async turn(text: string): Promise<void> {
    if (!this.session) this.session = await this.client.createSession(titleOf(text));
    const attachments = this.pending;
    this.pending = [];
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
