/**
 * Structured logging: one JSON object per line on stderr.
 *
 * Secrets never reach a log line: every value registered with `redactValue` (provider keys, auth
 * secrets, database URLs, read once at startup) is replaced with `[redacted]` before a line is written,
 * whatever field it hides in.
 */
import { isoNow } from "./lib/clock.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LogSink {
  write(line: string): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  sink?: LogSink;
  /** Values that must never appear in output (secrets). Short values are ignored: they would mangle text. */
  secrets?: Iterable<string>;
}

const stderrSink: LogSink = { write: (line) => process.stderr.write(line) };

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? "info"];
  const sink = options.sink ?? stderrSink;
  const secrets = [...(options.secrets ?? [])].filter((s) => s.length >= 6);
  // Longest first, so a secret containing another is replaced whole.
  secrets.sort((a, b) => b.length - a.length);

  const scrub = (text: string) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join("[redacted]");
    return out;
  };

  const make = (base: LogFields): Logger => {
    const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
      if (LEVELS[level] < threshold) return;
      const record = { time: isoNow(), level, msg, ...base, ...fields };
      sink.write(`${scrub(JSON.stringify(record, errorReplacer))}\n`);
    };
    return {
      debug: (msg, fields) => emit("debug", msg, fields),
      info: (msg, fields) => emit("info", msg, fields),
      warn: (msg, fields) => emit("warn", msg, fields),
      error: (msg, fields) => emit("error", msg, fields),
      child: (fields) => make({ ...base, ...fields }),
    };
  };
  return make({});
}

/** Errors serialise as name, message and stack (stacks stay in the log, never in a response). */
function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

/** A logger that drops everything: for unit tests that do not look at logs. */
export const silentLogger: Logger = createLogger({ sink: { write() {} } });
