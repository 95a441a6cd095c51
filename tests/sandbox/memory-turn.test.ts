/**
 * A turn whose Python fills memory past the sandbox's bound (policy `sandbox.memory_mb`) fails with one
 * clear `turn_error` (code `sandbox_memory_limit`) instead of restarting the interpreter for the model to
 * fill again; history shows it failed with that code.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(180_000);

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp({ edits: [["memory_mb = 2048", "memory_mb = 512"]] });
});
afterAll(() => t.close());

test("memory past the bound ends the turn with turn_error sandbox_memory_limit", async () => {
  const session = await createSession(t);
  // The offline model runs the message's fenced Python: 64 MiB blocks up to 4 GiB, each byte touched.
  const code = "kept = []\nfor i in range(64):\n    kept.append(bytes([1]) * (64 << 20))\nprint(len(kept))";
  const { events } = await runTurn(t, session, { text: `\`\`\`python\n${code}\n\`\`\`` });
  const terminal = events.filter((e) => ["turn_finish", "turn_error", "turn_cancelled"].includes(e.type));
  expect(terminal).toHaveLength(1);
  expect(terminal[0]).toMatchObject({ type: "turn_error", code: "sandbox_memory_limit" });
  expect(String(terminal[0]?.message)).toContain("memory");
  // Nothing of the fill was printed: the interpreter was stopped before it finished.
  expect(events.some((e) => e.type === "output" && String(e.output).includes("64"))).toBe(false);
  const run = await t.ctx.database.get("SELECT status, error_code FROM turn_runs WHERE session_id = ?", [
    session,
  ]);
  expect(run).toEqual({ status: "failed", error_code: "sandbox_memory_limit" });
});
