/**
 * `atrium chat`: the terminal client of the chat family. With `-m TEXT` one message for scripts
 * (oneshot.ts); without, an interactive session (interactive.ts). The server is `--url`, else
 * `APP_BASE_URL`, else http://127.0.0.1:8000.
 */

import type { Mode } from "../../schemas/chat.ts";
import { Api } from "../api.ts";
import { parse, runCommand, UsageError } from "../args.ts";
import { chatOneShot } from "./oneshot.ts";

export const USAGE = `Usage: atrium chat [--url URL] [--session ID] [--model KEY] [--mode MODE]      interactive
       atrium chat -m TEXT [--session ID] [--model KEY] [--mode MODE] [--json] [--url URL]   one message

  -m, --message TEXT   send one message, print the reply and exit (0, or 1 with code: message);
                       a question the model asks is answered by a line of stdin (EOF skips it)
      --json           with -m: print every event of the reply as one JSON line (NDJSON)
      --session ID     continue this session (default: a new one)
      --model KEY      the model, as provider/id (default: the server's)
      --mode MODE      agent (default), plan or harness
      --url URL        the server (default: $APP_BASE_URL, else http://127.0.0.1:8000)

Environment: APP_BASE_URL, APP_TOKEN (a bearer token; else the one \`atrium login\` saved).
Interactive keys: Enter sends (while a reply runs: steers it), Ctrl-C stops the reply (at the prompt:
twice to exit), Ctrl-D on an empty prompt exits. /help lists the commands.
`;

const MODES = new Set(["agent", "plan", "harness"]);

export function main(argv: string[]): Promise<number> {
  return runCommand("chat", USAGE, async () => {
    const { values, positionals } = parse(argv, {
      message: { type: "string", short: "m" },
      session: { type: "string" },
      model: { type: "string" },
      mode: { type: "string" },
      json: { type: "boolean" },
      url: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.mode !== undefined && !MODES.has(values.mode))
      throw new UsageError(`--mode is agent, plan or harness, not ${values.mode}`);
    const mode = values.mode as Mode | undefined;
    const api = Api.from(values.url);
    if (values.message !== undefined) {
      if (!values.message.trim()) throw new UsageError("the message is empty");
      return chatOneShot(api, {
        request: { message: values.message, sessionId: values.session, model: values.model, mode },
        json: values.json ?? false,
      });
    }
    if (values.json) throw new UsageError("--json goes with -m");
    const { interactive } = await import("./interactive.ts");
    return interactive(api, { sessionId: values.session, model: values.model, mode });
  });
}
