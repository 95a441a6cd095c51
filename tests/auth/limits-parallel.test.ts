/**
 * Limits that hold under concurrency and across a restart: sign-in attempts are reserved before the
 * password hash (so parallel guesses cannot all reach it), counted in the database (so a restart keeps
 * them, and the workspace reindex limit with them), and every hash goes through one bounded queue (so
 * sign-in cannot saturate the CPU; beyond its line, 503 with Retry-After). The hashes are real argon2id
 * verifications behind a hasher that counts them and watches how many run at once.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type PasswordHasher, PasswordQueue } from "../../server/auth/password-queue.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";
import { authApp, databaseEnvOf, PASSWORD, signUp } from "./auth-app.ts";

setDefaultTimeout(120_000);

const apps: TestApp[] = [];
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const app of apps.splice(0)) await app.close();
});

/**
 * Bun's argon2id, counted: verifications, hashes, and the most that ever ran at once. While `hold()` is
 * in force, every hash waits at a gate first (still counted as running), so a test can fill the queue
 * before anything finishes.
 */
function countingHasher() {
  const seen = { verifies: 0, hashes: 0, running: 0, maxRunning: 0 };
  let gate: Promise<void> = Promise.resolve();
  const track = async <T>(work: () => Promise<T>): Promise<T> => {
    seen.running++;
    seen.maxRunning = Math.max(seen.maxRunning, seen.running);
    try {
      await gate;
      return await work();
    } finally {
      seen.running--;
    }
  };
  const hasher: PasswordHasher = {
    hash: (password) => {
      seen.hashes++;
      return track(() => Bun.password.hash(password));
    },
    verify: (password, hash) => {
      seen.verifies++;
      return track(() => Bun.password.verify(password, hash));
    },
  };
  const hold = () => {
    let open = () => {};
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    return open;
  };
  return { seen, hasher, hold };
}

/** Starts requests at once; `statuses` fills as they settle. */
function fire(requests: (() => Promise<Response>)[]) {
  const statuses: number[] = [];
  const all = Promise.all(
    requests.map((request) =>
      request().then((r) => {
        statuses.push(r.status);
        return r;
      }),
    ),
  );
  return { statuses, all };
}

async function app(options: Parameters<typeof authApp>[0] = {}) {
  const made = await authApp(options);
  apps.push(made);
  return made;
}

const signIn = (t: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
  t.request("/api/auth/sign-in/email", postJson({ email, password }, headers));

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((out, s) => {
    out[s] = (out[s] ?? 0) + 1;
    return out;
  }, {});

describe("parallel guesses", () => {
  test("40 parallel sign-ins on one account reach the password hash 5 times; the rest get 429", async () => {
    const { seen, hasher } = countingHasher();
    const t = await app({ passwords: new PasswordQueue({ hasher }) });
    await signUp(t, "ann@example.org");
    seen.verifies = 0;
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(t, "ann@example.org", `wrong-guess-${i}`)),
    );
    expect(seen.verifies).toBe(5);
    expect(tally(responses.map((r) => r.status))).toEqual({ 401: 5, 429: 35 });
    const limited = responses.find((r) => r.status === 429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    // Locked for the right password too, without another hash.
    expect((await signIn(t, "ann@example.org", PASSWORD)).status).toBe(429);
    expect(seen.verifies).toBe(5);
  });

  test("200 parallel sign-ins from one address (over a real socket) reach the hash 20 times", async () => {
    const { seen, hasher } = countingHasher();
    const t = await app({ passwords: new PasswordQueue({ hasher }) });
    const server = listen(t);
    cleanups.push(() => server.stop());
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(
          `${server.url}/api/auth/sign-in/email`,
          postJson({ email: `guess${i}@example.org`, password: "wrong-pass" }),
        ),
      ),
    );
    for (const r of responses) await r.arrayBuffer();
    expect(seen.verifies).toBe(20);
    expect(tally(responses.map((r) => r.status))).toEqual({ 401: 20, 429: 180 });
  });
});

describe("across a restart", () => {
  test("a new app on the same data dir keeps the sign-in and reindex counts", async () => {
    const data = tempDir();
    cleanups.push(() => data.remove());
    const first = await authApp({ dataDir: data.path });
    const ann = await signUp(first, "ann@example.org");
    for (let i = 0; i < 5; i++)
      expect((await signIn(first, "ann@example.org", `wrong-${i}-x`)).status).toBe(401);
    const reindex = (t: TestApp) => t.request("/api/workspace/reindex", postJson({}, ann.bearer));
    for (let i = 0; i < 5; i++) expect((await reindex(first)).status).toBe(200);
    await first.close();

    const second = await app({ dataDir: data.path, env: databaseEnvOf(first) });
    const locked = await signIn(second, "ann@example.org", PASSWORD);
    expect(locked.status).toBe(429);
    const reindexed = await reindex(second);
    expect(reindexed.status).toBe(429);
    expect(reindexed.headers.get("retry-after")).toBe("60");
    // The session survived the restart too: the refusal is the limit, not a lost sign-in.
    expect((await second.request("/api/workspace/tree", { headers: ann.bearer })).status).toBe(200);
  });
});

describe("the password queue", () => {
  test("bounds concurrent hashes; beyond its line 503 with Retry-After, and a refused attempt is not counted", async () => {
    const { seen, hasher, hold } = countingHasher();
    const t = await app({ passwords: new PasswordQueue({ hasher, concurrency: 2, line: 3 }) });
    await signUp(t, "ann@example.org");
    // Unknown accounts cost the same verification as known ones: the dummy hash exists from here on.
    expect((await signIn(t, "nobody@example.org", "wrong-pass")).status).toBe(401);
    seen.maxRunning = 0;
    let open = hold();
    // Ten sign-ins, each for its own email (no limit applies): two hash, three wait, five are refused.
    const signIns = fire(
      Array.from({ length: 10 }, (_, i) => () => signIn(t, `u${i}@example.org`, "wrong-pass")),
    );
    await waitFor(() => signIns.statuses.length === 5, { what: "five refusals" });
    expect(signIns.statuses).toEqual([503, 503, 503, 503, 503]);
    expect(seen.running).toBe(2);
    open();
    const responses = await signIns.all;
    expect(seen.maxRunning).toBe(2);
    expect(tally(responses.map((r) => r.status))).toEqual({ 401: 5, 503: 5 });
    const busy = responses.find((r) => r.status === 503);
    expect(Number(busy?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await busy?.json()).toEqual({
      message: "The server is busy checking passwords; try again in a moment",
    });
    // A refused attempt was never counted against its account: five real failures still fit.
    const refused = responses.findIndex((r) => r.status === 503);
    for (let i = 0; i < 5; i++)
      expect((await signIn(t, `u${refused}@example.org`, `wrong-${i}-x`)).status).toBe(401);
    expect((await signIn(t, `u${refused}@example.org`, "wrong-again")).status).toBe(429);

    // Sign-up's hash goes through the same queue: open sign-up cannot go around it.
    seen.maxRunning = 0;
    open = hold();
    const signUps = fire(
      Array.from(
        { length: 8 },
        (_, i) => () =>
          t.request(
            "/api/auth/sign-up/email",
            postJson({ email: `new${i}@example.org`, password: PASSWORD }),
          ),
      ),
    );
    await waitFor(() => signUps.statuses.length === 3, { what: "three refusals" });
    open();
    const made = await signUps.all;
    expect(seen.maxRunning).toBe(2);
    expect(tally(made.map((r) => r.status))).toEqual({ 200: 5, 503: 3 });
  });
});
