/**
 * `atrium login --url URL`: signs in to a team server (its session sign-in, `POST
 * /api/auth/sign-in/email`) and keeps the session token for that URL in the user's config folder
 * (credentials.ts, mode 0600); `atrium turns` and `atrium chat` then send it as a bearer token.
 * `--sign-out` ends the session on the server and forgets the token. The password is read from the
 * terminal without echo, or from the first line of stdin when stdin is not a terminal (scripts).
 */
import { createInterface } from "node:readline";
import { Api, ApiError, baseUrlOf } from "./api.ts";
import { parse, runCommand, UsageError } from "./args.ts";
import { credentialFor, saveCredential } from "./credentials.ts";

export const USAGE = `Usage: atrium login --url URL [--email EMAIL]     sign in; keeps the session token
       atrium login --url URL --sign-out             end the session and forget the token

  --url URL       the team server (default: $APP_BASE_URL, else http://127.0.0.1:8000)
  --email EMAIL   the account (asked for when absent)

The password is asked for without echo (or read from the first line of stdin in a script). The token
is kept in $XDG_CONFIG_HOME/atrium/credentials.json (else ~/.config/atrium/credentials.json), mode 0600.
APP_TOKEN, when set, is used instead of any saved token.
`;

/** Lines of stdin as a script gives them. */
function lineReader() {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const iterator = rl[Symbol.asyncIterator]();
  return {
    async next(): Promise<string | undefined> {
      const { value, done } = await iterator.next();
      return done ? undefined : String(value);
    },
    close: () => rl.close(),
  };
}

/** A line typed at the terminal without echo (a password); Ctrl-C gives up. */
function hiddenLine(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    process.stderr.write(prompt);
    const stdin = process.stdin;
    let typed = "";
    stdin.setRawMode(true);
    stdin.resume();
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(new UsageError("sign-in cancelled"));
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
        else if (ch >= " ") typed += ch;
      }
    };
    stdin.on("data", onData);
  });
}

async function credentials(email: string | undefined): Promise<{ email: string; password: string }> {
  if (process.stdin.isTTY) {
    let address = email;
    if (!address) {
      const reader = lineReader();
      process.stderr.write("email: ");
      address = (await reader.next())?.trim();
      reader.close();
    }
    if (!address) throw new UsageError("an email is needed");
    return { email: address, password: await hiddenLine("password: ") };
  }
  const reader = lineReader();
  try {
    const address = email ?? (await reader.next())?.trim();
    const password = await reader.next();
    if (!address || password === undefined) throw new UsageError("expected the password on stdin");
    return { email: address, password };
  } finally {
    reader.close();
  }
}

export function main(argv: string[]): Promise<number> {
  return runCommand("login", USAGE, async () => {
    const { values, positionals } = parse(argv, {
      url: { type: "string" },
      email: { type: "string" },
      "sign-out": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const baseUrl = baseUrlOf(values.url, process.env);
    if (values["sign-out"]) {
      const token = credentialFor(baseUrl);
      if (token) await new Api({ baseUrl, token }).send("POST", "/api/auth/sign-out").catch(() => undefined);
      saveCredential(baseUrl, undefined);
      process.stdout.write(`signed out of ${baseUrl}\n`);
      return 0;
    }
    const { hostname, protocol } = new URL(baseUrl);
    if (protocol === "http:" && !["127.0.0.1", "localhost", "[::1]"].includes(hostname))
      process.stderr.write(
        `warning: ${baseUrl} is plain HTTP: the password and the token cross the network unencrypted\n`,
      );
    const { email, password } = await credentials(values.email);
    const api = new Api({ baseUrl });
    let signed: { token: string; user: { email?: string } };
    try {
      signed = await api.send("POST", "/api/auth/sign-in/email", { email, password });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404)
        throw new ApiError(
          "no_sign_in",
          `${baseUrl} has no session sign-in (its operator sets APP_AUTH_SECRET)`,
          404,
        );
      if (error instanceof ApiError && error.status === 401)
        throw new ApiError("invalid_credentials", "Invalid email or password", 401);
      throw error;
    }
    const path = saveCredential(baseUrl, { token: signed.token, email, savedAt: new Date().toISOString() });
    process.stdout.write(
      `signed in to ${baseUrl} as ${signed.user.email ?? email}; the session token is in ${path}\n`,
    );
    return 0;
  });
}
