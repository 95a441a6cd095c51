/**
 * Helpers for the turns tests: an app over a policy variant (the committed policy with a few values
 * changed, in a temp file) with its sandbox pool warming, sessions, and turn requests.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BASE, createTestApp, REPO_ROOT, type TestApp, type TestAppOptions } from "./app.ts";
import { type Frame, readFrames } from "./streams.ts";
import { tempDir } from "./tmp.ts";

/** The committed policy with `[from, to]` text replacements, written to a temp file. */
export function policyVariant(edits: [string, string][]): { path: string; remove(): void } {
  let text = readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8");
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`policy has no '${from}'`);
    text = text.replace(from, to);
  }
  const dir = tempDir("atrium-policy-");
  const path = join(dir.path, "policy.toml");
  writeFileSync(path, text);
  return { path, remove: dir.remove };
}

export async function turnsApp(
  options: TestAppOptions & { edits?: [string, string][] } = {},
): Promise<TestApp & { policyPath: string }> {
  const policy = policyVariant(options.edits ?? []);
  // Warmed as a listening server warms its pool once composed (APP_SANDBOX_WARM=0: none).
  const t = await createTestApp({
    ...options,
    serving: true,
    policyPath: policy.path,
    env: { APP_SANDBOX_WARM: "1", ...options.env },
  });
  return {
    ...t,
    policyPath: policy.path,
    async close() {
      await t.close();
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

/** The spec events of a default-form stream (frames with an `event:` line). */
export function specEvents(frames: Frame[]): Ev[] {
  return frames.filter((f) => f.event).map((f) => JSON.parse(f.data) as Ev);
}

export async function runTurn(t: TestApp, sessionId: string, body: unknown, key?: string) {
  const response = await t.request(`/api/sessions/${sessionId}/turns`, turnRequest(body, key));
  const frames = await readFrames(response);
  return { response, frames, events: specEvents(frames) };
}

export { BASE };
