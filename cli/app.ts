/**
 * The frame both interactive clients share, on pi-tui (pi's own terminal UI library: a differential
 * renderer, a multi-line editor with history and slash-command completion): a header, the transcript,
 * a status line and the editor. Keys: Enter sends; Ctrl-C goes to the running request first (the
 * subclass cancels it); at the prompt it clears the text, then arms, and a second Ctrl-C exits; Ctrl-D
 * on an empty prompt exits.
 */
import {
  CombinedAutocompleteProvider,
  Container,
  Editor,
  matchesKey,
  ProcessTerminal,
  type SlashCommand,
  Text,
  TUI,
} from "@mariozechner/pi-tui";
import { ApiError } from "./api.ts";
import { clean, editorTheme, style } from "./style.ts";

export abstract class TerminalApp {
  readonly tui = new TUI(new ProcessTerminal());
  readonly transcript = new Container();
  protected readonly editor = new Editor(this.tui, editorTheme);
  private readonly footer = new Text("", 1, 0);
  private exitArmed = false;
  private finish: ((code: number) => void) | undefined;

  constructor(title: string, commands: SlashCommand[]) {
    this.tui.addChild(new Text(title, 1, 0));
    this.tui.addChild(this.transcript);
    this.tui.addChild(this.footer);
    this.tui.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.editor.setAutocompleteProvider(new CombinedAutocompleteProvider(commands, process.cwd()));
    this.editor.onSubmit = (text) => void this.submitted(text);
    this.tui.addInputListener((data) => {
      if (matchesKey(data, "ctrl+c")) {
        this.ctrlC();
        return { consume: true };
      }
      if (matchesKey(data, "ctrl+d") && !this.editor.getText() && !this.busy()) {
        this.exit(0);
        return { consume: true };
      }
      return undefined;
    });
  }

  /** A request is running (Ctrl-C goes to it). */
  protected abstract busy(): boolean;
  /** Ctrl-C while busy. */
  protected abstract interrupt(): void;
  /** A line the person sent (slash commands included). */
  protected abstract submit(text: string): Promise<void>;
  /** What the status line says besides the exit hint. */
  protected abstract status(): string;
  /** Called on exit, before the terminal is given back. */
  protected stopped(): void {}

  run(): Promise<number> {
    return new Promise((resolve) => {
      this.finish = resolve;
      for (const signal of ["SIGTERM", "SIGHUP"] as const) process.once(signal, () => this.exit(0));
      this.updateFooter();
      this.tui.start();
    });
  }

  exit(code: number): void {
    this.stopped();
    this.tui.stop();
    this.finish?.(code);
  }

  /** A line of the client's own in the transcript (command output, errors). */
  say(text: string): void {
    this.transcript.addChild(new Text(text, 1, 0));
    this.tui.requestRender();
  }

  fail(error: unknown): void {
    if (error instanceof ApiError) this.say(style.error(clean(`✗ ${error.code}: ${error.message}`)));
    else this.say(style.error(clean(`✗ ${(error as Error).message ?? String(error)}`)));
  }

  updateFooter(): void {
    const armed = this.exitArmed && !this.busy() ? " · press Ctrl-C again to exit" : "";
    this.footer.setText(style.muted(`${this.status()}${armed}`));
    this.tui.requestRender();
  }

  private async submitted(text: string): Promise<void> {
    if (!text) return;
    this.exitArmed = false;
    this.editor.addToHistory(text);
    try {
      await this.submit(text);
    } catch (error) {
      this.fail(error);
    }
    this.updateFooter();
  }

  private ctrlC(): void {
    if (this.busy()) this.interrupt();
    else if (this.editor.getText()) this.editor.setText("");
    else if (this.exitArmed) {
      this.exit(0);
      return;
    } else this.exitArmed = true;
    this.updateFooter();
  }
}
