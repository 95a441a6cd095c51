/**
 * Command-line parsing shared by the client's subcommands (node:util's parseArgs, strict: an unknown
 * flag is a usage error, exit 2), and the one way they report a failure: `atrium <cmd>: code: message`
 * on stderr.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { ApiError } from "./api.ts";
import { clean } from "./style.ts";

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<T extends Options>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs a subcommand's body: usage errors exit 2, API errors 1, each with one line on stderr. */
export async function runCommand(name: string, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`atrium ${name}: ${error.message}\n\n${usage}`);
      return 2;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`atrium ${name}: ${clean(`${error.code}: ${error.message}`)}\n`);
      return 1;
    }
    throw error;
  }
}
