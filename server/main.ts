/**
 * The server's entry point: `bun server/main.ts [flags]`; `--help` lists every flag and variable.
 * `bun server/main.ts <command>` runs a subcommand instead (server/commands.ts). Both load lazily, so a
 * sandbox worker never evaluates the server's modules (pi's, for one, read HOME as they load, and the
 * worker runs with an empty environment). pi-package.ts must run before pi loads, hence the order.
 * A server start first sets the sandbox's probes going (child processes), so they run while the
 * server's modules load rather than after (the turns family awaits their answer before composing).
 */
import { commandOf } from "./commands.ts";

const argv = process.argv.slice(2);
const sub = commandOf(argv);
const done = sub
  ? sub.command.load().then((main) => main(argv.slice(1)))
  : import("./sandbox/isolation.ts")
      .then((isolation) => {
        if (!argv.some((a) => ["--help", "-h", "--version", "-v"].includes(a)))
          void isolation.detectSandboxInBackground();
      })
      .then(() => import("./pi-package.ts"))
      .then(() => import("./run.ts"))
      .then((m) => m.run(argv));

done.then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`atrium: ${(error as Error).message ?? error}\n`);
    process.exit(1);
  },
);
