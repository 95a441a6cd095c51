/**
 * `atrium turns`: the terminal client of the turns family. With `-m TEXT` one turn for scripts
 * (oneshot.ts); without, an interactive session (interactive.ts). The server is `--url`, else
 * `APP_BASE_URL`, else http://127.0.0.1:8000.
 */
import { Api } from "../api.ts";
import { parse, runCommand, UsageError } from "../args.ts";
import { oneShot } from "./oneshot.ts";

export const USAGE = `Usage: atrium turns [--url URL] [--session ID]                 interactive
       atrium turns -m TEXT [--session ID] [--attach FILE]... [--json] [--url URL]   one turn

  -m, --message TEXT   run one turn, print its answer and exit (0, or 1 with code: message)
      --json           with -m: print every event of the turn as one JSON line (NDJSON)
      --session ID     continue this session (default: a new one)
      --attach FILE    with -m: attach a file to the turn (repeatable)
      --url URL        the server (default: $APP_BASE_URL, else http://127.0.0.1:8000)

Environment: APP_BASE_URL, APP_TOKEN (a bearer token; else the one \`atrium login\` saved).
Interactive keys: Enter sends, Ctrl-C cancels the running turn (at the prompt: twice to exit),
Ctrl-D on an empty prompt exits. /help lists the commands.
`;

export function main(argv: string[]): Promise<number> {
  return runCommand("turns", USAGE, async () => {
    const { values, positionals } = parse(argv, {
      message: { type: "string", short: "m" },
      session: { type: "string" },
      json: { type: "boolean" },
      attach: { type: "string", multiple: true },
      url: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const api = Api.from(values.url);
    if (values.message !== undefined) {
      if (!values.message.trim()) throw new UsageError("the message is empty");
      return oneShot(api, {
        message: values.message,
        sessionId: values.session,
        json: values.json ?? false,
        attach: values.attach ?? [],
      });
    }
    if (values.json || values.attach) throw new UsageError("--json and --attach go with -m");
    const { interactive } = await import("./interactive.ts");
    return interactive(api, { sessionId: values.session });
  });
}
