/** The server's entry point: `bun server/main.ts [flags]`; `--help` lists every flag and variable. */
import { run } from "./run.ts";

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`atrium: ${(error as Error).message ?? error}\n`);
    process.exit(1);
  },
);
