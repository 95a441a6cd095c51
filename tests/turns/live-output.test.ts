/**
 * What a Python step prints shows while the step runs: `output` events with `isDelta: true` come before
 * the step's final `output` event (which still carries the whole text), in the default stream, as
 * transient parts of the UI message stream, in the replay of a committed turn; the history keeps only
 * the final text. Streamed output is bounded by the output cap and batched: Python writing to the host
 * pipe in a tight loop makes a few events, not one per write.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { readFrames } from "../helpers/streams.ts";
import { createSession, type Ev, runTurn, turnRequest, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(120_000);

let t: TestApp;
let session: string;
beforeAll(async () => {
  t = await turnsApp();
  session = await createSession(t);
});
afterAll(() => t.close());

/** Prints a line, then keeps the CPU busy for 0.3 s (longer than a flush interval), three times. */
const ticking =
  "```python\nimport time\nfor i in range(3):\n    print(f'tick {i}', flush=True)\n    t0 = time.monotonic()\n    while time.monotonic() - t0 < 0.3:\n        pass\n```";

const outputsOf = (events: Ev[]) => events.filter((e) => e.type === "output");

describe("output while a step runs", () => {
  test("print streams as output deltas before the final output, which has the whole text; replay has them", async () => {
    const key = crypto.randomUUID();
    const { events } = await runTurn(t, session, { text: ticking }, key);
    expect(events.at(-1)?.type).toBe("turn_finish");
    const outputs = outputsOf(events);
    const deltas = outputs.filter((o) => o.isDelta);
    const final = outputs.filter((o) => !o.isDelta);
    expect(final).toEqual([
      {
        type: "output",
        streamId: "o1",
        step: 1,
        output: "tick 0\ntick 1\ntick 2\n",
        isDelta: false,
        final: true,
      },
    ]);
    // Each tick was printed 0.3 s after the one before: each went out on its own, before the step ended.
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    for (const d of deltas) expect(d).toMatchObject({ streamId: "o1", step: 1, final: false });
    expect(outputs.at(-1)?.isDelta).toBe(false);
    const streamed = deltas.map((d) => d.output).join("");
    expect(streamed).toStartWith("tick 0\ntick 1\n");
    expect("tick 0\ntick 1\ntick 2\n".startsWith(streamed)).toBe(true);
    // The step's end comes after its streamed output.
    const finishAt = events.findIndex((e) => e.type === "step_finish");
    expect(events.findIndex((e) => e.type === "output" && e.isDelta)).toBeLessThan(finishAt);

    const again = await runTurn(t, session, { text: ticking }, key);
    expect(again.events.find((e) => e.type === "turn_start")?.delivery).toBe("replay");
    expect(outputsOf(again.events)).toEqual(outputs);

    // The history keeps the final output only.
    const history = await t.json<{
      items: { runId: string; messages: { parts: { type: string; data?: { output?: string } }[] }[] }[];
    }>(`/api/sessions/${session}/turns`);
    const runId = events.find((e) => e.type === "turn_start")?.runId;
    const item = history.body.items.find((i) => i.runId === runId);
    const parts = item?.messages[1]?.parts.filter((p) => p.type === "data-output");
    expect(parts?.map((p) => p.data?.output)).toEqual(["tick 0\ntick 1\ntick 2\n"]);
  });

  test("the UI message stream carries the deltas as transient parts and the final output as the part", async () => {
    const response = await t.request(
      `/api/sessions/${session}/turns?format=ui-message-stream`,
      turnRequest({ text: ticking }),
    );
    const chunks = (await readFrames(response))
      .filter((f) => f.data !== "[DONE]")
      .map((f) => JSON.parse(f.data) as Ev)
      .filter((c) => c.type === "data-output");
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const last = chunks.at(-1);
    expect(last?.transient).toBeUndefined();
    expect(last?.data).toMatchObject({ output: "tick 0\ntick 1\ntick 2\n", isDelta: false, final: true });
    for (const c of chunks.slice(0, -1)) {
      expect(c.transient).toBe(true);
      expect(c.data).toMatchObject({ isDelta: true, final: false });
    }
  });

  test("streamed output is bounded by the output cap and batched, whatever the Python writes", async () => {
    // The host pipe written to directly, 100,000 times: far more than the cap, one character at a time.
    const flood =
      "```python\nimport _atrium_host\nfor _ in range(100000):\n    _atrium_host.output('stdout', 'x')\nprint('done')\n```";
    const { events } = await runTurn(t, session, { text: flood });
    expect(events.at(-1)?.type).toBe("turn_finish");
    const deltas = outputsOf(events).filter((o) => o.isDelta);
    const streamed = deltas.reduce((n, d) => n + String(d.output).length, 0);
    // The committed policy's output cap (sandbox output_limit and max_output_chars: 65,536).
    expect(streamed).toBeLessThanOrEqual(65_537);
    expect(streamed).toBeGreaterThan(0);
    // Batched: at most one event per 4 KiB of text, plus one per 100 ms the step ran.
    const ran = Number(events.find((e) => e.type === "step_finish")?.durationMs);
    expect(deltas.length).toBeLessThanOrEqual(Math.ceil(streamed / 4096) + Math.ceil(ran / 100) + 1);
    expect(outputsOf(events).at(-1)).toMatchObject({ isDelta: false, output: "done\n" });

    // print in a loop past the cap: the deltas stop at the cap, the final output says it was cut.
    const loud = "```python\nfor i in range(40000):\n    print('line', i)\n```";
    const second = await runTurn(t, session, { text: loud });
    const outputs = outputsOf(second.events);
    const total = outputs.filter((o) => o.isDelta).reduce((n, d) => n + String(d.output).length, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(65_537);
    expect(String(outputs.at(-1)?.output)).toEndWith("[output truncated]");
  });
});
