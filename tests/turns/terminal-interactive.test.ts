/**
 * `atrium turns` interactive, in a real terminal (tmux): typed keys in, the screen read back. A Python
 * turn renders its code, output and answer; Ctrl-C cancels a loop that never ends (the run is cancelled
 * on the server, the tombstone shows); `/resume` shows a session's committed history; Ctrl-C twice at
 * the prompt exits 0.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { Tmux } from "../helpers/terminal.ts";
import { tempDir } from "../helpers/tmp.ts";
import { turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";

const ESC = "\u001b";

// Turns start pyodide interpreters: seconds each on a loaded machine.
setDefaultTimeout(120_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
const terminals: Tmux[] = [];
const files = tempDir("atrium-tui-files-");
/** The session of the first test, resumed by the last one. */
let counted: string;

beforeAll(async () => {
  t = await turnsApp();
  server = listen(t);
});

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close();
});

afterAll(async () => {
  await server.stop();
  await t.close();
  files.remove();
});

function terminal(...args: string[]): Tmux {
  const tmux = new Tmux().start(["turns", "--url", server.url, ...args]);
  terminals.push(tmux);
  return tmux;
}

async function history(sessionId: string) {
  const response = await fetch(`${server.url}/api/sessions/${sessionId}/turns`);
  return ((await response.json()) as { items: { runId: string; status: string }[] }).items;
}

const sessionOf = (screen: string) => screen.match(/session (ses_[0-9a-f]+)/)?.[1] as string;

describe("atrium turns (interactive, in tmux)", () => {
  test("a Python turn renders its code (highlighted), its output, the answer and usage", async () => {
    const tmux = terminal();
    await tmux.waitFor("new session (starts with your first message)");
    // The last print tries to retitle the terminal with an escape sequence: it must arrive as text.
    tmux.type(
      "count\n```python\nfor i in range(3):\n    print('line', i * 7)\nprint('\\x1b]2;pwned\\x07title kept')\nSUBMIT('counted')\n```",
    );
    tmux.keys("Enter");
    const screen = await tmux.waitFor(/usage: 1 step/, { timeoutMs: 90_000 });
    expect(screen).toContain("python · step 1");
    expect(screen).toContain("│ for i in range(3):");
    expect(screen).toMatch(/│ line 0\n.*│ line 7\n.*│ line 14\n.*│ title kept\n/);
    expect(tmux.title()).not.toContain("pwned");
    expect(screen).toMatch(/\n counted\n/);
    // The code is highlighted: its keywords carry colour escapes the plain output does not.
    const coloured = tmux.screen(0, true).split("\n");
    const codeLine = coloured.find((line) => stripVTControlCharacters(line).includes("│ for i in range(3):"));
    expect(codeLine).toMatch(new RegExp(`${ESC}\\[[0-9;]*mfor\\b`));
    counted = sessionOf(screen);
    // The usage line is drawn before the outcome commits (turn_finish follows the commit): wait for the row.
    const sessionId = counted;
    const turns = await waitFor(async () => {
      const items = await history(sessionId);
      return items.length ? items : undefined;
    });
    expect(turns.map((turn) => turn.status)).toEqual(["completed"]);
  });

  test("Ctrl-C cancels a loop that never ends: the run is cancelled and the tombstone shows", async () => {
    const tmux = terminal();
    await tmux.waitFor("new session");
    tmux.type("spin\n```python\nwhile True:\n    pass\n```");
    tmux.keys("Enter");
    await tmux.waitFor("│ while True:", { timeoutMs: 90_000 });
    await tmux.waitFor("running · Ctrl-C cancels");
    tmux.keys("C-c");
    const screen = await tmux.waitFor("Turn cancelled");
    expect(screen).toContain("cancelling…");
    const sessionId = sessionOf(screen);
    const turns = await waitFor(async () => {
      const items = await history(sessionId);
      return items.length ? items : undefined;
    });
    expect(turns.map((turn) => turn.status)).toEqual(["cancelled"]);
    // The prompt is back: a second message runs in the same session.
    await tmux.waitFor(/session ses_[0-9a-f]+ · spin\n/);
  });

  test("/resume ID shows the session's committed turns; /sessions, /skills, /attach; Ctrl-C twice exits", async () => {
    const sessionId = counted;
    const tmux = terminal();
    await tmux.waitFor("new session");
    tmux.type(`/resume ${sessionId}`);
    tmux.keys("Enter");
    const screen = await tmux.waitFor(/\n counted\n/);
    expect(screen).toContain(`resumed session ${sessionId} · count`);
    expect(screen).toContain("you › count");
    expect(screen).toContain("│     print('line', i * 7)");
    expect(screen).toMatch(/│ line 0\n.*│ line 7\n.*│ line 14\n/);
    expect(screen).toMatch(/run_[0-9a-f]+ · completed · /);
    tmux.keys("C-c");
    await tmux.waitFor("press Ctrl-C again to exit");
    // Any command disarms the exit; these need no turn.
    tmux.type("/sessions");
    tmux.keys("Enter");
    await tmux.waitFor(`* ${sessionId}  count`);
    tmux.type("/skills");
    tmux.keys("Enter");
    await tmux.waitFor(/data-analysis \S+ {2}\S/);
    const file = join(files.path, "notes.txt");
    writeFileSync(file, "alpha beta\n");
    tmux.type(`/attach ${file}`);
    tmux.keys("Enter");
    await tmux.waitFor("attached notes.txt (11 B) to your next message");
    await tmux.waitFor(`session ${sessionId} · count · attached: notes.txt`);
    tmux.keys("C-c");
    await tmux.waitFor("press Ctrl-C again to exit");
    tmux.keys("C-c");
    await tmux.waitFor("[exited 0]");
  });
});
