/**
 * Leases (server/storage/leases.ts) and the signal bus (server/storage/bus/), on the embedded SQLite file
 * and on PostgreSQL: two Leases objects on one database stand for two instances.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MemoryBus } from "../../server/storage/bus/memory.ts";
import { PostgresBus } from "../../server/storage/bus/postgres.ts";
import { openDb } from "../../server/storage/db/open.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { Leases } from "../../server/storage/leases.ts";
import leasesPg from "../../server/storage/migrations/0003_leases.pg.sql" with { type: "text" };
import leasesSqlite from "../../server/storage/migrations/0003_leases.sql" with { type: "text" };
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

const TTL = 300;
/**
 * The heartbeat test's lease time: a beat every third of it must land before it runs out, and a loaded
 * machine (two suites side by side) once stalled a 300 ms lease's beats past it on PostgreSQL.
 */
const HEARTBEAT_TTL = 1000;

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`leases on ${engine}`, () => {
    let db: Db;
    const dir = tempDir("atrium-leases-");
    beforeAll(async () => {
      const url = engine === "postgres" ? await freshPostgresDatabase() : undefined;
      db = openDb({ url, dataDir: join(dir.path, "data") });
      await db.exec(engine === "postgres" ? leasesPg : leasesSqlite);
    });
    afterAll(async () => {
      await db.close();
      dir.remove();
    });
    const pair = (ttlMs = TTL) =>
      [new Leases(db, { instance: "inst_a", ttlMs }), new Leases(db, { instance: "inst_b", ttlMs })] as const;

    test("take: the first instance gets it, another does not while it is live, the holder may take it again", async () => {
      const [a, b] = pair();
      expect(await a.take("turn", "r1")).toBe(true);
      expect(await b.take("turn", "r1")).toBe(false);
      expect(await a.take("turn", "r1")).toBe(true);
      const row = await b.get("turn", "r1");
      expect(row?.holder).toBe("inst_a");
      expect(row?.expires_at).toBeGreaterThan(Date.now());
      expect(await b.live("turn", "r1")).toBe(true);
      // Another kind with the same id is another lease.
      expect(await b.take("index", "r1")).toBe(true);
    });

    test("renewing keeps it past its lease time; once it lapses another instance takes it", async () => {
      const [a, b] = pair(HEARTBEAT_TTL);
      expect(await a.take("turn", "r2")).toBe(true);
      a.start();
      try {
        await Bun.sleep(HEARTBEAT_TTL * 2.5);
        expect(await b.take("turn", "r2")).toBe(false);
        expect(await a.live("turn", "r2")).toBe(true);
      } finally {
        a.stop();
      }
      // A stopped heartbeat (a crashed instance): it lapses, then b may take it.
      await waitFor(async () => !(await b.live("turn", "r2")), { timeoutMs: HEARTBEAT_TTL * 10 });
      expect((await b.lapsed("turn")).map((r) => r.id)).toContain("r2");
      expect(await b.take("turn", "r2")).toBe(true);
      expect((await a.get("turn", "r2"))?.holder).toBe("inst_b");
      expect((await b.lapsed("turn")).map((r) => r.id)).not.toContain("r2");
    });

    test("release frees it at once, and only its holder can release it", async () => {
      const [a, b] = pair();
      expect(await a.take("turn", "r3")).toBe(true);
      await b.release("turn", "r3");
      expect((await a.get("turn", "r3"))?.holder).toBe("inst_a");
      await a.release("turn", "r3");
      expect(await a.get("turn", "r3")).toBeUndefined();
      expect(await b.take("turn", "r3")).toBe(true);
    });

    test("a lease taken over while its holder was away is reported lost to the holder, once", async () => {
      const [a, b] = pair();
      const lost: string[] = [];
      const off = a.onLost((kind, id) => lost.push(`${kind}:${id}`));
      expect(await a.take("turn", "r4")).toBe(true);
      expect(await a.take("turn", "r5")).toBe(true);
      await Bun.sleep(TTL + 20);
      expect(await b.take("turn", "r4")).toBe(true);
      await a.renew();
      expect(lost).toEqual(["turn:r4"]);
      // r5 (lapsed but not taken) was renewed and is still a's.
      expect(await b.take("turn", "r5")).toBe(false);
      await a.renew();
      expect(lost).toEqual(["turn:r4"]);
      off();
      await b.release("turn", "r4");
      await a.release("turn", "r5");
    });
  });
}

describe("signal bus", () => {
  test("memory: subscribers get each payload after publish returns; unsubscribe stops them", async () => {
    const bus = new MemoryBus();
    const got: string[] = [];
    const off = await bus.subscribe("c", (p) => got.push(`1:${p}`));
    await bus.subscribe("c", (p) => got.push(`2:${p}`));
    await bus.subscribe("other", (p) => got.push(`o:${p}`));
    const sent = bus.publish("c", "x");
    expect(got).toEqual([]); // never inside the publisher's call
    await sent;
    await waitFor(() => got.length === 2);
    expect(got.sort()).toEqual(["1:x", "2:x"]);
    await off();
    await bus.publish("c", "y");
    await waitFor(() => got.length === 3);
    expect(got[2]).toBe("2:y");
    await bus.close();
  });

  test("postgres: another instance's connection gets publishes in order, its own too; unsubscribe stops them", async () => {
    const url = await freshPostgresDatabase();
    const a = new PostgresBus(url);
    const b = new PostgresBus(url);
    try {
      const onB: string[] = [];
      const onA: string[] = [];
      const offB = await b.subscribe("atrium_test", (p) => onB.push(p));
      await a.subscribe("atrium_test", (p) => onA.push(p));
      await b.subscribe("atrium_other", (p) => onB.push(`other:${p}`));
      for (let i = 0; i < 20; i++) await a.publish("atrium_test", `m${i}`);
      const all = Array.from({ length: 20 }, (_, i) => `m${i}`);
      await waitFor(() => onB.length === 20 && onA.length === 20, { timeoutMs: 10_000 });
      expect(onB).toEqual(all);
      expect(onA).toEqual(all);
      await offB();
      await a.publish("atrium_test", "after");
      await waitFor(() => onA.length === 21, { timeoutMs: 10_000 });
      await Bun.sleep(100);
      expect(onB).toEqual(all);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
