/**
 * The interactive session's slash commands: /new, /sessions, /resume ID, /attach FILE, /skills,
 * /history, /retry, /help, /quit. Each talks to the server through the app's client and writes into its
 * transcript; a failure throws (the app shows it as `✗ code: message`).
 */
import type { SlashCommand } from "@mariozechner/pi-tui";
import type { Attachment, Session } from "../../schemas/turns.ts";
import type { Api } from "../api.ts";
import type { TerminalApp } from "../app.ts";
import { bytes, clean, style } from "../style.ts";
import type { TurnsClient } from "./client.ts";
import { historyView } from "./history.ts";

export const SLASH_COMMANDS: SlashCommand[] = [
  { name: "new", description: "start a new session (with your next message)" },
  { name: "sessions", description: "list your recent sessions" },
  { name: "resume", description: "continue a session and show its history", argumentHint: "ID" },
  { name: "attach", description: "attach a file to your next message", argumentHint: "FILE" },
  { name: "skills", description: "list the skills turns can use" },
  { name: "history", description: "show this session's committed turns" },
  { name: "retry", description: "send the message of the turn that failed again, as a new turn" },
  { name: "help", description: "list commands and keys" },
  { name: "quit", description: "leave (also Ctrl-C twice at the prompt, or Ctrl-D)" },
];

const HELP = `${SLASH_COMMANDS.map((c) => `  /${`${c.name} ${c.argumentHint ?? ""}`.padEnd(14)} ${c.description}`).join("\n")}
keys: Enter sends · Alt-Enter (or \\ then Enter) adds a line · Up/Down recall earlier messages
      Ctrl-C cancels the running turn (again: stop following it) · at the prompt Ctrl-C twice exits`;

/**
 * What the slash commands drive: the interactive app (interactive.ts), described here so this file does
 * not import the one that imports it.
 */
export type TurnsSlashHost = Pick<TerminalApp, "say" | "exit" | "tui" | "transcript"> & {
  readonly api: Api;
  readonly client: TurnsClient;
  session: Session | undefined;
  pending: Attachment[];
  /** Sends the failed turn's message again as a new turn. */
  retry(): Promise<void>;
};

async function showHistory(app: TurnsSlashHost, sessionId: string): Promise<void> {
  const records = await app.client.history(sessionId);
  if (!records.length) app.say(style.muted("(no turns yet)"));
  for (const record of records) app.transcript.addChild(historyView(record, app.api.baseUrl));
  app.tui.requestRender();
}

export async function slash(app: TurnsSlashHost, line: string): Promise<void> {
  const [command = "", ...rest] = line.slice(1).split(/\s+/);
  const argument = line.slice(1 + command.length).trim();
  switch (command) {
    case "help":
      app.say(HELP);
      return;
    case "retry":
      await app.retry();
      return;
    case "quit":
    case "exit":
      app.exit(0);
      return;
    case "new":
      app.session = argument ? await app.client.createSession(argument.slice(0, 200)) : undefined;
      app.transcript.clear();
      app.say(style.muted(app.session ? `new session ${app.session.id}` : "new session: send a message"));
      return;
    case "sessions": {
      const { items, total } = await app.client.sessions();
      if (!items.length) app.say(style.muted("(no sessions yet)"));
      const lines = items.map((s) => {
        const mark = s.id === app.session?.id ? style.accent("*") : " ";
        return `${mark} ${clean(`${s.id}  ${s.title}`)}  ${style.muted(clean(s.updatedAt))}`;
      });
      if (total > items.length) lines.push(style.muted(`(${items.length} of ${total})`));
      app.say(lines.join("\n"));
      app.say(style.muted("/resume ID continues one"));
      return;
    }
    case "resume": {
      if (!rest[0]) throw new Error("usage: /resume ID (see /sessions)");
      const session = await app.client.session(rest[0]);
      app.session = session;
      app.transcript.clear();
      app.say(style.muted(clean(`resumed session ${session.id} · ${session.title}`)));
      await showHistory(app, session.id);
      return;
    }
    case "history":
      if (!app.session) throw new Error("no session yet: send a message, or /resume ID");
      await showHistory(app, app.session.id);
      return;
    case "attach": {
      if (!argument) throw new Error("usage: /attach FILE");
      const attachment = await app.client.attach(argument);
      app.pending.push(attachment);
      app.say(
        style.muted(
          clean(`attached ${attachment.filename} (${bytes(attachment.byteSize)}) to your next message`),
        ),
      );
      return;
    }
    case "skills": {
      const { items } = await app.client.skills();
      app.say(
        items
          .map((s) => `${style.accent(clean(s.id))} ${clean(`${s.version}  ${s.description}`)}`)
          .join("\n"),
      );
      return;
    }
    default:
      throw new Error(`unknown command /${command} (see /help)`);
  }
}
