/**
 * The sandbox pool's ceiling and line, with stand-in sandbox processes (a few lines of JavaScript that
 * report ready, or never do), so the mechanics run in milliseconds: at most `max` interpreters alive,
 * first come first served with each waiter told its place, round robin between owners, children ahead
 * of turns and a slot kept for them, the queue deadline, the start deadline (killed, reported, replaced), and a slot kept across a
 * restart after a timed-out step.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { InterpreterQueueTimeout } from "../../server/sandbox/fair-line.ts";
import { type Interpreter, SandboxKilled } from "../../server/sandbox/interpreter.ts";
import { defaultMaxInterpreters, InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { waitFor } from "../helpers/wait.ts";

/** A process that reports ready at once and then idles, like a warm interpreter. */
const READY = [
  process.execPath,
  "-e",
  `console.log('{"type":"ready","python":"stand-in"}'); setInterval(() => {}, 1e6)`,
];
/** A process that never reports ready (pyodide hanging at start). */
const HANGS = [process.execPath, "-e", "setInterval(() => {}, 1e6)"];

const pools: InterpreterPool[] = [];
function pool(options: ConstructorParameters<typeof InterpreterPool>[0]) {
  const p = new InterpreterPool({ isolation: "none", ...options });
  pools.push(p);
  return p;
}
afterEach(() => {
  for (const p of pools.splice(0)) p.close();
});

describe("sandbox pool ceiling", () => {
  test("the default ceiling follows cores and memory, never below 2", () => {
    const GiB = 1024 ** 3;
    expect(defaultMaxInterpreters(2, 24 * GiB)).toBe(4);
    expect(defaultMaxInterpreters(16, 4 * GiB)).toBe(4);
    expect(defaultMaxInterpreters(1, 1 * GiB)).toBe(2);
  });

  test("beyond the ceiling turns wait in line, first come first served, told their place", async () => {
    const p = pool({ command: READY, max: 2, warm: 0 });
    const places: number[][] = [[], [], [], [], []];
    const served: number[] = [];
    const acquiring = places.map((seen, i) =>
      p.acquire({ onQueue: (ahead) => (ahead === undefined ? served.push(i) : seen.push(ahead)) }),
    );
    const first = await acquiring[0];
    await acquiring[1];
    expect(p.stats()).toMatchObject({ max: 2, live: 2, waiting: 3 });
    expect(places.map((s) => s.at(-1))).toEqual([undefined, undefined, 0, 1, 2]);
    p.release(first as never);
    await acquiring[2];
    expect(served).toEqual([2]);
    // The line moved up: the last waiter was told it is now second.
    expect(places[4]).toEqual([2, 1]);
    expect(p.stats().live).toBe(2);
    for (const i of [1, 2]) p.release((await acquiring[i]) as never);
    await Promise.all(acquiring);
    expect(served).toEqual([2, 3, 4]);
    expect(p.stats()).toMatchObject({ live: 2, waiting: 0 });
  });

  test("the line is round robin between owners: one user's burst waits behind other users' turns", async () => {
    const p = pool({ command: READY, max: 1, warm: 0 });
    const held = await p.acquire({ owner: "ann" });
    const served: string[] = [];
    const places: Record<string, number> = {};
    const got = new Map<string, Interpreter>();
    const ask = (label: string, owner: string) =>
      p
        .acquire({
          owner,
          onQueue: (ahead) => {
            if (ahead !== undefined) places[label] = ahead;
          },
        })
        .then((interpreter) => {
          served.push(label);
          got.set(label, interpreter);
        });
    // Ann's burst of four came first, then Bob's two and Cat's one.
    const asked = [
      ["ann1", "ann"],
      ["ann2", "ann"],
      ["ann3", "ann"],
      ["ann4", "ann"],
      ["bob1", "bob"],
      ["bob2", "bob"],
      ["cat1", "cat"],
    ].map(([label, owner]) => ask(label as string, owner as string));
    expect(places).toEqual({ ann1: 0, bob1: 1, cat1: 2, ann2: 3, bob2: 4, ann3: 5, ann4: 6 });
    // Served one at a time; after each, the owner just served goes to the back of the rotation.
    let current: Interpreter = held;
    for (let i = 0; i < 7; i++) {
      p.release(current);
      await waitFor(() => served.length === i + 1);
      current = got.get(served[i] as string) as Interpreter;
      if (i === 0) expect(places).toMatchObject({ bob1: 0, cat1: 1, ann2: 2, bob2: 3, ann3: 4, ann4: 5 });
    }
    p.release(current);
    await Promise.all(asked);
    expect(served).toEqual(["ann1", "bob1", "cat1", "ann2", "bob2", "ann3", "ann4"]);
    expect(p.stats()).toMatchObject({ waiting: 0 });
  });

  test("a turn that gives up leaves its owner's place in the rotation to the owner's next turn", async () => {
    const p = pool({ command: READY, max: 1, warm: 0 });
    const held = await p.acquire({ owner: "ann" });
    const served: string[] = [];
    const gaveUp = new AbortController();
    const ask = (label: string, owner: string, signal?: AbortSignal) =>
      p.acquire({ owner, ...(signal ? { signal } : {}) }).then(
        (interpreter) => {
          served.push(label);
          return interpreter;
        },
        () => served.push(`${label} gave up`),
      );
    const bob1 = ask("bob1", "bob", gaveUp.signal);
    const bob2 = ask("bob2", "bob");
    const ann1 = ask("ann1", "ann");
    gaveUp.abort();
    await bob1;
    p.release(held);
    p.release((await bob2) as Interpreter);
    p.release((await ann1) as Interpreter);
    expect(served).toEqual(["bob1 gave up", "bob2", "ann1"]);
  });

  test("children go ahead of waiting turns, and one slot is kept for them", async () => {
    const p = pool({ command: READY, max: 2, reservedForChildren: 1, warm: 0 });
    const turn = await p.acquire();
    // A second turn may not take the kept slot...
    let secondTurn = false;
    const waitingTurn = p.acquire().then((i) => {
      secondTurn = true;
      return i;
    });
    // ...but the first turn's child can. The turn asked first: had it taken the slot, it would have been
    // served by the time the child's interpreter is up (and the child, with no slot left, never would).
    const child = await p.acquire({ child: true });
    expect(secondTurn).toBe(false);
    expect(p.stats().live).toBe(2);
    // With both slots taken, a second child waits, and is served before the waiting turn.
    const order: string[] = [];
    void waitingTurn.then(() => order.push("turn"));
    const secondChild = p.acquire({ child: true }).then((i) => {
      order.push("child");
      return i;
    });
    p.release(child);
    await waitFor(() => order.length === 1);
    expect(order).toEqual(["child"]);
    p.release(await secondChild);
    p.release(turn);
    await waitFor(() => order.length === 2);
    expect(order).toEqual(["child", "turn"]);
  });

  test("a turn gives up at its queue deadline", async () => {
    const p = pool({ command: READY, max: 1, warm: 0 });
    const held = await p.acquire();
    const started = Date.now();
    const error = await p.acquire({ queueTimeoutMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterpreterQueueTimeout);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(p.stats()).toMatchObject({ live: 1, waiting: 0 });
    p.release(held);
  });

  test("an interpreter that never reports ready is killed at its start deadline, reported, and replaced", async () => {
    const p = pool({ command: HANGS, max: 2, warm: 1, startTimeoutMs: 200 });
    void p.warm();
    await waitFor(() => p.stats().live === 1);
    const error = await p.acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxKilled);
    expect((error as SandboxKilled).reason).toBe("start_timeout");
    // The hung warm one freed its slot and a replacement was started in its place: the ceiling holds.
    await waitFor(() => p.stats().live === 1 && p.stats().idle === 1);
    expect(p.stats().live).toBeLessThanOrEqual(2);
  });

  test("a step restart keeps the turn's slot instead of queueing behind other turns", async () => {
    const p = pool({ command: READY, max: 1, warm: 0 });
    const first = await p.acquire();
    let other = false;
    const waiting = p.acquire().then((i) => {
      other = true;
      return i;
    });
    const fresh = await p.replace(first);
    expect(fresh.pid).not.toBe(first.pid);
    await waitFor(() => !first.alive);
    expect(other).toBe(false);
    p.release(fresh);
    p.release(await waiting);
  });
});
