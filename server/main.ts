/** The server's entry point: `bun server/main.ts [flags]`; `--help` lists every flag and variable. */
import "./pi-package.ts";
import { commandOf } from "./commands.ts";
import { run } from "./run.ts";

const argv = process.argv.slice(2);
const sub = commandOf(argv);
const done = sub ? sub.command.load().then((m) => m.main(argv.slice(1))) : run(argv);

done.then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`atrium: ${(error as Error).message ?? error}\n`);
    process.exit(1);
  },
);
