/**
 * Turns on a busy machine: with as many busy-looping processes as there are cores (started here), 20
 * Python turns from 4 owners, sent at once, all complete. None fails with sandbox_start_timeout (a start
 * is judged by its own CPU time, not the wall clock, and a failed start is retried), the pool never has
 * more interpreters alive than its ceiling, and the server's memory stays bounded.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { availableParallelism } from "node:os";
import type { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { readFrames } from "../helpers/streams.ts";
import { type Ev, specEvents, turnRequest, turnsApp } from "../helpers/turns.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

setDefaultTimeout(900_000);

const OWNERS = ["ada", "brook", "cyd", "dee"];
const TURNS_PER_OWNER = 5;

test("20 turns from 4 owners all complete while every core is busy", async () => {
  const t = await turnsApp({ ...twoUsers(), ownSandbox: true });
  const load = Array.from({ length: availableParallelism() }, () =>
    Bun.spawn([process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "ignore" }),
  );
  const pool = t.family("turns").runtime.sandbox.pool as InterpreterPool;
  let mostAlive = 0;
  const sampler = setInterval(() => {
    mostAlive = Math.max(mostAlive, pool.stats().live);
  }, 50);
  const rssBefore = process.memoryUsage().rss;
  try {
    const turn = async (owner: string, n: number): Promise<Ev[]> => {
      const headers = asUser(owner, { "content-type": "application/json" });
      const session = await t.json<{ id: string }>("/api/sessions", {
        method: "POST",
        headers,
        body: JSON.stringify({ title: `${owner} ${n}` }),
      });
      const request = turnRequest({
        text: `\`\`\`python\nprint('${owner}', ${n}, sum(range(1000)))\n\`\`\``,
      });
      const response = await t.request(`/api/sessions/${session.body.id}/turns`, {
        ...request,
        headers: { ...(request.headers as Record<string, string>), ...asUser(owner) },
      });
      return specEvents(await readFrames(response));
    };
    const all = await Promise.all(
      OWNERS.flatMap((owner) => Array.from({ length: TURNS_PER_OWNER }, (_, n) => turn(owner, n))),
    );
    const outcomes = all.map((events) => {
      const error = events.find((e) => e.type === "turn_error");
      return error ? `failed: ${error.code}` : String(events.find((e) => e.type === "turn_finish")?.status);
    });
    expect(outcomes).toEqual(Array(OWNERS.length * TURNS_PER_OWNER).fill("completed"));
    // Each turn printed its own line: no turn got another's interpreter or output.
    all.forEach((events, i) => {
      const owner = OWNERS[Math.floor(i / TURNS_PER_OWNER)];
      const output = events.find((e) => e.type === "output" && e.final)?.output;
      expect(output).toBe(`${owner} ${i % TURNS_PER_OWNER} 499500\n`);
    });
    expect(mostAlive).toBeLessThanOrEqual(pool.max);
    // The server holds streams and events, not interpreters: its own memory grows by far less than one.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(512 * 1024 * 1024);
  } finally {
    clearInterval(sampler);
    for (const busy of load) busy.kill("SIGKILL");
    await t.close();
  }
}, 60_000);
