/**
 * Helpers for the turns tests: an app over a policy variant (the committed policy with a few values
 * changed, in a temp file) with its sandbox pool warming, sessions, and turn requests.
 *
 * The apps share warm sandbox pools, one per pool configuration, across apps and test files
 * (sandbox-pools.ts); `ownSandbox` gives an app a pool of its own.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { turnSandboxOptions } from "../../server/turns/runtime/sandbox.ts";
import { BASE, createTestApp, REPO_ROOT, type TestApp, type TestAppOptions } from "./app.ts";
import { borrowPool } from "./sandbox-pools.ts";
import { type Frame, readFrames } from "./streams.ts";
import { tempDir } from "./tmp.ts";

/** The committed policy with `[from, to]` text replacements and `append` at its end, in a temp file. */
export function policyVariant(edits: [string, string][], append = ""): { path: string; remove(): void } {
  let text = readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8");
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`policy has no '${from}'`);
    text = text.replace(from, to);
  }
  const dir = tempDir("atrium-policy-");
  const path = join(dir.path, "policy.toml");
  writeFileSync(path, `${text}\n${append}`);
  return { path, remove: dir.remove };
}

export interface TurnsAppOptions extends TestAppOptions {
  edits?: [string, string][];
  /** The app builds and closes a pool of its own instead of sharing one (tests of the pool's lifecycle). */
  ownSandbox?: boolean;
}

export async function turnsApp(options: TurnsAppOptions = {}): Promise<TestApp & { policyPath: string }> {
  const policy = policyVariant(options.edits ?? []);
  // Warmed as a listening server warms its pool once composed (APP_SANDBOX_WARM=0: none).
  const t = await createTestApp({
    ...options,
    compose: false,
    policyPath: policy.path,
    env: { APP_SANDBOX_WARM: "1", ...options.env },
  });
  const turns = t.family("turns");
  const sandbox = turnSandboxOptions(t.ctx);
  const shareable = !options.ownSandbox && !t.dataDir.startsWith(`${REPO_ROOT}/`);
  const borrowed = shareable ? borrowPool(sandbox, (options) => new InterpreterPool(options)) : undefined;
  if (borrowed) turns.runtime.sandbox.share(borrowed.pool);
  if (options.compose !== false) {
    await t.compose();
    turns.serving();
  }
  return {
    ...t,
    policyPath: policy.path,
    async close() {
      await t.close();
      borrowed?.giveBack();
      policy.remove();
    },
  };
}

export async function createSession(t: TestApp, title = "test"): Promise<string> {
  const { body } = await t.json<{ id: string }>("/api/sessions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title }),
  });
  return body.id;
}

export function turnRequest(body: unknown, key: string | null = crypto.randomUUID()): RequestInit {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== null) headers["idempotency-key"] = key;
  return { method: "POST", headers, body: JSON.stringify(body) };
}

// biome-ignore lint/suspicious/noExplicitAny: test payloads are inspected field by field
export type Ev = { type: string } & Record<string, any>;

/** The contract's events of a default-form stream (frames with an `event:` line). */
export function specEvents(frames: Frame[]): Ev[] {
  return frames.filter((f) => f.event).map((f) => JSON.parse(f.data) as Ev);
}

export async function runTurn(t: TestApp, sessionId: string, body: unknown, key?: string) {
  const response = await t.request(`/api/sessions/${sessionId}/turns`, turnRequest(body, key));
  const frames = await readFrames(response);
  return { response, frames, events: specEvents(frames) };
}

export { BASE };
