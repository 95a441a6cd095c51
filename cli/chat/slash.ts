/**
 * The chat session's slash commands: /new, /sessions, /resume ID, /model [KEY], /mode MODE,
 * /execute, /refine [TEXT], /help, /quit. A failure throws (the app shows it as `✗ code: message`).
 */
import type { SlashCommand } from "@mariozechner/pi-tui";
import { count } from "../../common/words.ts";
import type { ChatRequest, Mode } from "../../schemas/chat.ts";
import type { TerminalApp } from "../app.ts";
import { clean, style } from "../style.ts";
import type { ChatClient } from "./client.ts";
import { ChatView } from "./view.ts";

const MODES: Mode[] = ["agent", "plan", "harness"];

export const SLASH_COMMANDS: SlashCommand[] = [
  { name: "new", description: "start a new session (with your next message)" },
  { name: "sessions", description: "list your recent sessions" },
  { name: "resume", description: "continue a session and show its messages", argumentHint: "ID" },
  { name: "model", description: "list models, or use one: /model provider/id", argumentHint: "[KEY]" },
  {
    name: "mode",
    description: "agent, plan (a read-only plan first) or harness (allowed tools only)",
    // No argument completion: pi-tui's editor takes Enter on an argument suggestion as "complete", not "send".
    argumentHint: "MODE",
  },
  { name: "execute", description: "run the plan's todos (plan mode)" },
  { name: "refine", description: "re-plan with your notes (plan mode)", argumentHint: "[TEXT]" },
  { name: "skip", description: "skip the question the model asked" },
  { name: "help", description: "list commands and keys" },
  { name: "quit", description: "leave (also Ctrl-C twice at the prompt, or Ctrl-D)" },
];

const HELP = `${SLASH_COMMANDS.map((c) => `  /${`${c.name} ${c.argumentHint ?? ""}`.padEnd(14)} ${c.description}`).join("\n")}
keys: Enter sends (while a reply runs: steers it) · Alt-Enter (or \\ then Enter) adds a line
      Ctrl-C stops the running reply · at the prompt Ctrl-C twice exits · a question: type the answer`;

/**
 * What the slash commands drive: the interactive app (interactive.ts), described here so this file does
 * not import the one that imports it.
 */
export type ChatSlashHost = Pick<TerminalApp, "say" | "exit" | "tui" | "transcript"> & {
  readonly client: ChatClient;
  sessionId: string | undefined;
  model: string | undefined;
  mode: Mode;
  send(request: ChatRequest, shown?: string): Promise<void>;
};

export async function slash(app: ChatSlashHost, line: string): Promise<void> {
  const [command = ""] = line.slice(1).split(/\s+/);
  const argument = line.slice(1 + command.length).trim();
  switch (command) {
    case "help":
      app.say(HELP);
      return;
    case "quit":
    case "exit":
      app.exit(0);
      return;
    case "new":
      app.sessionId = undefined;
      app.transcript.clear();
      app.say(style.muted("new session: send a message"));
      return;
    case "sessions": {
      const { sessions } = await app.client.sessions();
      if (!sessions.length) app.say(style.muted("(no sessions yet)"));
      const lines = sessions.map((s) => {
        const mark = s.sessionId === app.sessionId ? style.accent("*") : " ";
        return `${mark} ${clean(`${s.sessionId}  ${s.title}`)}  ${style.muted(clean(`${count(s.messageCount, "message")} · ${s.updatedAt}`))}`;
      });
      if (lines.length) app.say(`${lines.join("\n")}\n${style.muted("/resume ID continues one")}`);
      return;
    }
    case "resume": {
      if (!argument) throw new Error("usage: /resume ID (see /sessions)");
      const hydrated = await app.client.resume(argument);
      app.sessionId = hydrated.session.sessionId ?? argument;
      app.transcript.clear();
      app.say(
        style.muted(
          `resumed session ${app.sessionId}${hydrated.sessionReset ? " (it was lost: a fresh one)" : ""}`,
        ),
      );
      let view: ChatView | undefined;
      for (const message of hydrated.messages) {
        if (message.role === "user") {
          const text = message.parts
            .map((p) => (p.type === "text" ? (p as { text: string }).text : ""))
            .join("");
          view = new ChatView(text);
          app.transcript.addChild(view);
        } else {
          const reply = view ?? new ChatView();
          if (!view) app.transcript.addChild(reply);
          reply.redraw(message.parts);
          view = undefined;
        }
      }
      if (!hydrated.messages.length) app.say(style.muted("(no messages yet)"));
      app.tui.requestRender();
      return;
    }
    case "model": {
      if (argument) {
        app.model = argument;
        app.say(style.muted(`model: ${argument} (from your next message)`));
        return;
      }
      const { models, selectedModelKey } = await app.client.models();
      const current = app.model ?? selectedModelKey;
      const lines = models.map((m) => {
        const mark = m.key === current ? style.accent("*") : " ";
        return `${mark} ${clean(m.key)}${m.available ? "" : style.muted(" (not configured)")}`;
      });
      app.say(`${lines.join("\n")}\n${style.muted("/model KEY uses one")}`);
      return;
    }
    case "mode": {
      if (!MODES.includes(argument as Mode)) throw new Error("usage: /mode agent|plan|harness");
      app.mode = argument as Mode;
      app.say(style.muted(`mode: ${argument} (from your next message)`));
      return;
    }
    case "execute":
      await app.send({ planAction: "execute" }, "/execute");
      return;
    case "refine":
      await app.send({ planAction: "refine", message: argument || undefined }, line);
      return;
    case "skip":
      throw new Error("no question is waiting");
    default:
      throw new Error(`unknown command /${command} (see /help)`);
  }
}
