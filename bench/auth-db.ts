/**
 * The auth layer's hot paths on PostgreSQL ÷ SQLite, measured in the same run (issue 27: "sign-in" among
 * each family's hot paths, and the round trips each path makes). Two apps with session auth, one on
 * app.db and one on a fresh PostgreSQL database (the throwaway cluster of tests/helpers/postgres.ts),
 * interleaved per round:
 *
 *   sign-in          `SessionAuth.signIn`: the account read, the limits' reservation (one transaction),
 *                    the hash, giving back the address slot, clearing the account's, a new session
 *   session check    `SessionAuth.validate`: what every request of a signed-in browser pays
 *   token check      `AccessTokens.validate` of an `atr_…` bearer
 *   bearer guard     `LimitStore.retryAfter` of the address: paid with every bearer token
 *   http session     `GET /api/auth/get-session` with a bearer, through the whole app in process
 *
 * The password hash is the cheap argon2id the tests use (1 MiB, one pass), so the database's share shows;
 * with the production cost (bench/sign-in.ts) the hash is ~99% of a sign-in on either engine. Statements
 * per call are counted on the port (a transaction's BEGIN and COMMIT count: each is a round trip on
 * PostgreSQL).
 *
 *   bun bench/auth-db.ts [--n 200] [--rounds 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type App, createApp } from "../server/app.ts";
import { PasswordQueue } from "../server/auth/password-queue.ts";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { type AppContext, createContext } from "../server/context.ts";
import { silentLogger } from "../server/log.ts";
import { CHEAP_ARGON2ID } from "../tests/helpers/app.ts";
import { freshPostgresDatabase, stopPostgres } from "../tests/helpers/postgres.ts";
import { countStatements } from "./lib/count-statements.ts";
import { printEngineRatios } from "./lib/engine-ratios.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "200" }, rounds: { type: "string", default: "3" } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const EMAIL = "bench@example.org";
const PASSWORD = "correct horse battery staple";

interface Engine {
  name: string;
  dir: string;
  ctx: AppContext;
  app: App;
  counter: { count: number };
  session: string;
  token: string;
}

async function engine(name: string, extraEnv: Record<string, string>): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), `atrium-bench-auth-${name}-`));
  const cli = parseCli(["--port", "0", "--data-dir", dir], {}, join(import.meta.dir, ".."));
  if (cli.kind !== "serve") throw new Error("bad bench arguments");
  const env = createEnvSource({
    APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
    APP_AUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
    APP_AUTH_SIGNUP: "closed",
    ...extraEnv,
  });
  const ctx = createContext({
    config: loadConfig(cli.options, env),
    env,
    log: silentLogger,
    passwords: new PasswordQueue({ hasher: CHEAP_ARGON2ID }),
  });
  const app = createApp(ctx);
  await app.compose();
  const auth = ctx.auth;
  if (!auth) throw new Error("session auth is off");
  const user = await auth.createAccount({ email: EMAIL, password: PASSWORD });
  const session = (await auth.startSession(user.id)).token;
  const token = (await ctx.tokens.create(user.id, { name: "bench", scopes: ["chat"] })).token;
  return { name, dir, ctx, app, counter: countStatements(ctx.database), session, token };
}

type Subject = (e: Engine) => Promise<unknown>;
const subjects: Record<string, Subject> = {
  "sign-in": (e) => e.ctx.auth?.signIn({ email: EMAIL, password: PASSWORD }, "127.0.0.1") as Promise<unknown>,
  "session check": async (e) => {
    if (!(await e.ctx.auth?.validate(e.session))) throw new Error("the session does not validate");
  },
  "token check": async (e) => {
    if (!(await e.ctx.tokens.validate(e.token))) throw new Error("the token does not validate");
  },
  "bearer guard": (e) =>
    e.ctx.limits.retryAfter([{ key: "signin-address:127.0.0.1", limit: 20, windowMs: 900_000 }]),
  "http session": async (e) => {
    const response = await e.app.elysia.handle(
      new Request("http://localhost/api/auth/get-session", {
        headers: { authorization: `Bearer ${e.session}` },
      }),
    );
    if (response.status !== 200) throw new Error(`get-session answered ${response.status}`);
    await response.arrayBuffer();
  },
};
/** Sign-in hashes: fewer calls. */
const callsOf = (name: string) => (name === "sign-in" ? Math.max(5, Math.floor(N / 10)) : N);

const engines = [
  await engine("sqlite", {}),
  await engine("postgres", { APP_DATABASE_URL: await freshPostgresDatabase() }),
];
try {
  await printEngineRatios("auth hot paths", engines, subjects, { rounds: ROUNDS, callsOf });
} finally {
  for (const e of engines) {
    await e.app.close();
    rmSync(e.dir, { recursive: true, force: true });
  }
  await stopPostgres();
}
