/**
 * Sign-in latency for a correct password, against a bare `Bun.password.verify` of the same argon2id
 * hash measured in the same run: what the attempt limits (a reservation in SQLite before the hash, given
 * back on success) and the password queue add to the hash itself. Two subjects, interleaved per round:
 *
 *   service  `SessionAuth.signIn` (limits, queue, verification, a new session row)
 *   http     `POST /api/auth/sign-in/email` through the full app in process (`app.handle`: every
 *            plugin, body validation, the cookie)
 *
 * Each is timed one sign-in at a time (latency, not throughput). Ratios are of medians. The hash
 * dominates and varies with the machine's load, so the limits' own bookkeeping (reserve two windows,
 * give the address slot back, clear the account's: what a successful sign-in does in SQLite) is also
 * timed alone over many calls, as a share of the bare verification.
 *
 *   bun bench/sign-in.ts [--n 20] [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../server/app.ts";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { createContext } from "../server/context.ts";
import { silentLogger } from "../server/log.ts";
import { fmt, median, percentile, sample } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "20" }, rounds: { type: "string", default: "5" } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const EMAIL = "bench@example.org";
const PASSWORD = "correct horse battery staple";

const dir = mkdtempSync(join(tmpdir(), "atrium-bench-sign-in-"));
const cli = parseCli(["--port", "0", "--data-dir", dir], {}, join(import.meta.dir, ".."));
if (cli.kind !== "serve") throw new Error("bad bench arguments");
const env = createEnvSource({
  APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
  APP_AUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
  APP_AUTH_SIGNUP: "closed",
});
const ctx = createContext({ config: loadConfig(cli.options, env), env, log: silentLogger });
const app = createApp(ctx);
await app.compose();
const auth = ctx.auth;
if (!auth) throw new Error("session auth is off");
await auth.createAccount({ email: EMAIL, password: PASSWORD });
const hash = (await auth.accounts.byEmail(EMAIL))?.password_hash as string;

const body = JSON.stringify({ email: EMAIL, password: PASSWORD });
const subjects: Record<string, () => Promise<unknown>> = {
  "bare verify": async () => {
    if (!(await Bun.password.verify(PASSWORD, hash))) throw new Error("the hash does not verify");
  },
  service: () => auth.signIn({ email: EMAIL, password: PASSWORD }, "127.0.0.1"),
  http: async () => {
    const response = await app.elysia.handle(
      new Request("http://localhost/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    if (response.status !== 200) throw new Error(`sign-in answered ${response.status}`);
    await response.arrayBuffer();
  },
};

try {
  for (const run of Object.values(subjects)) await sample(run, 3); // warm every path
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so no subject always runs first (or right after the same neighbour).
    const names = Object.keys(subjects);
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
    for (const name of order)
      times[name]?.push(...(await sample(subjects[name] as () => Promise<unknown>, N)));
  }
  const reference = median(times["bare verify"] ?? []);
  const bookkeeping: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      const reserved = await ctx.limits.reserve([
        { key: "signin-address:127.0.0.1", limit: 20, windowMs: 900_000 },
        { key: `signin-account:${EMAIL}`, limit: 5, windowMs: 900_000 },
      ]);
      if (!reserved.ok) throw new Error("the bench's own limits filled up");
      await ctx.limits.release(reserved.ids.slice(0, 1));
      await ctx.limits.clear(`signin-account:${EMAIL}`);
    }
    bookkeeping.push((performance.now() - started) / 1000);
  }
  const limitsMs = median(bookkeeping);
  console.log(
    `limits alone ${fmt(limitsMs * 1000, 0).padStart(6)} µs per sign-in   ratio to bare verify ${fmt(limitsMs / reference, 4)}x`,
  );
  for (const [name, all] of Object.entries(times)) {
    const p50 = median(all);
    console.log(
      `${name.padEnd(12)} p50 ${fmt(p50, 1).padStart(6)} ms   p90 ${fmt(percentile(all, 90), 1).padStart(6)} ms   ratio to bare verify ${fmt(p50 / reference, 3)}x   (+${fmt(p50 - reference, 2)} ms)`,
    );
  }
} finally {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}
