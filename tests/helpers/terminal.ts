/**
 * Driving the terminal client as a person would: `runCli` runs a subcommand to its end (stdout, stderr,
 * exit code); `Tmux` runs one in a real terminal (Debian's tmux, on a private socket), types into it
 * (`send-keys`) and reads the screen (`capture-pane`), polling for text instead of sleeping.
 */
import { REPO_ROOT } from "./app.ts";
import { cleanEnv, finished, MAIN } from "./server.ts";
import { tempDir } from "./tmp.ts";
import { waitFor } from "./wait.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `bun server/main.ts <args>` with a clean environment and a config folder of its own (so no
 * saved credential of the developer's is read), feeding `stdin` if given.
 */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CliResult> {
  const config = tempDir("atrium-cli-config-");
  try {
    const proc = Bun.spawn([process.execPath, MAIN, ...args], {
      cwd: REPO_ROOT,
      env: cleanEnv({ XDG_CONFIG_HOME: config.path, ...options.env }),
      stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
      stdout: "pipe",
      stderr: "pipe",
    });
    return await finished(proc);
  } finally {
    config.remove();
  }
}

const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** One terminal (120×40) running one command on a tmux server of its own. */
export class Tmux {
  private readonly socket = `atrium-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly config = tempDir("atrium-tmux-config-");

  private tmux(...args: string[]): string {
    const proc = Bun.spawnSync(["tmux", "-L", this.socket, "-f", "/dev/null", ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.config.path },
    });
    if (proc.exitCode !== 0) throw new Error(`tmux ${args[0]}: ${proc.stderr.toString()}`);
    return proc.stdout.toString();
  }

  /**
   * Starts `bun server/main.ts <args>` in the terminal; when it exits the pane shows `[exited N]`
   * (the shell keeps the pane open so a test can read the code).
   */
  start(args: string[], env: Record<string, string> = {}): this {
    const vars = { ...cleanEnv({ XDG_CONFIG_HOME: this.config.path, ...env }), TERM: "xterm-256color" };
    const assignments = Object.entries(vars).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const command = [process.execPath, MAIN, ...args].map(shellQuote).join(" ");
    const script = `cd ${shellQuote(REPO_ROOT)} && env -i ${assignments.join(" ")} ${command}; echo "[exited $?]"; exec sleep 3600`;
    this.tmux("new-session", "-d", "-s", "main", "-x", "120", "-y", "40", "sh", "-c", script);
    return this;
  }

  /** The visible screen, plus `history` lines of scrollback above it; with `escapes`, its colours too. */
  screen(history = 0, escapes = false): string {
    const args = ["capture-pane", "-p", "-t", "main", ...(history ? ["-S", `-${history}`] : [])];
    return this.tmux(...args, ...(escapes ? ["-e"] : []));
  }

  async waitFor(text: string | RegExp, options: { timeoutMs?: number; history?: number } = {}) {
    const found = (screen: string) => (typeof text === "string" ? screen.includes(text) : text.test(screen));
    let last = "";
    try {
      return await waitFor(
        () => {
          last = this.screen(options.history ?? 0);
          return found(last) ? last : undefined;
        },
        { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 50, what: `${text} on screen` },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; the screen was:\n${last}`);
    }
  }

  /** The pane's title (what a program may set with an escape sequence). */
  title(): string {
    return this.tmux("display-message", "-p", "-t", "main", "#{pane_title}").trim();
  }

  /** Keys by tmux name (`Enter`, `C-c`, `M-Enter`, ...). */
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", "main", ...keys);
  }

  /** Literal text; each newline becomes Alt-Enter (a new line in the editor, not a send). */
  type(text: string): void {
    text.split("\n").forEach((line, i) => {
      if (i > 0) this.keys("M-Enter");
      if (line) this.tmux("send-keys", "-t", "main", "-l", line);
    });
  }

  close(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
    this.config.remove();
  }
}
