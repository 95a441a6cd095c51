/**
 * The tracer's batch timer and shutdown: a span a turn ends while the family settles is written before
 * the database closes or not at all; a timer firing into a closed database (an uncaught error that
 * broke the next test file's requests) never happens.
 */
import { expect, test } from "bun:test";
import { turnsApp } from "../helpers/turns.ts";

test("a span ended after the app closed is dropped: no batch timer writes into the closed database", async () => {
  const t = await turnsApp({ env: { APP_SANDBOX_WARM: "0" } });
  const tracer = t.family("turns").runtime.tracer;
  const trace = "a".repeat(32);
  const late = tracer.start(trace, "local", "after close", null);
  await t.close();
  late.end();
  // Longer than the batch timer (50 ms): without the close, its flush throws "closed database" here.
  const uncaught: unknown[] = [];
  const onError = (error: unknown) => uncaught.push(error);
  process.on("uncaughtException", onError);
  try {
    await Bun.sleep(150);
  } finally {
    process.off("uncaughtException", onError);
  }
  expect(uncaught).toEqual([]);
  expect(() => tracer.start(trace, "local", "later", null).end()).not.toThrow();
});
