/**
 * Transactions outside the API families' stores (docs/database.md, "Transactions and their tests") on
 * whichever engine the app runs: a sandbox uid allocation, a turn's spans, and the folder step's rewrite
 * of chat session paths. Each is made to fail part-way by the database itself and leaves nothing of itself
 * behind. None emits an event.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SandboxUidStore } from "../../server/sandbox/users/uid-store.ts";
import { type SpanRow, TurnSpanStore } from "../../server/turns/stores/spans.ts";
import { chatHexLegacyName } from "../../server/workspace/legacy-names.ts";
import { moveOwnerFolders } from "../../server/workspace/migrate-folders.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { failingWith, rows } from "../helpers/refuse-writes.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("SandboxUidStore.allocate: a refused allocation records nothing; the next one takes the index", async () => {
  const uids = new SandboxUidStore(t.ctx.database);
  await failingWith(t.ctx.database, ["sandbox_uids", "INSERT"], () => uids.allocate("tx-owner", 100));
  expect(await uids.indexOf("tx-owner")).toBeUndefined();
  const index = await uids.allocate("tx-owner", 100);
  expect(await uids.indexOf("tx-owner")).toBe(index);
});

test("TurnSpanStore.insert: a bad span in the second batch of 100 stores none of the 150", async () => {
  const spans = new TurnSpanStore(t.ctx.database);
  const span = (i: number, id = `spn_tx_${i}`): SpanRow => [
    id,
    "local",
    "trace_tx",
    null,
    null,
    `step ${i}`,
    new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    1,
    "ok",
    "{}",
  ];
  // The 131st repeats the first one's id: the primary key refuses the second statement.
  const batch = Array.from({ length: 150 }, (_, i) => span(i, i === 130 ? "spn_tx_0" : undefined));
  await expect(spans.insert(batch)).rejects.toThrow();
  expect(await rows(t.ctx.database, "turn_spans", "trace_id = ?", ["trace_tx"])).toBe(0);
  await spans.insert(Array.from({ length: 150 }, (_, i) => span(i)));
  expect(await spans.list("local", "trace_tx")).toHaveLength(150);
});

test("the folder step's session rows: one refused rewrite leaves every row of the owner at its old path", async () => {
  const owner = "tx.owner@example.org";
  const old = join(t.dataDir, "sessions", chatHexLegacyName(owner));
  mkdirSync(old, { recursive: true });
  const db = t.ctx.database;
  await db.run("INSERT INTO users (id, display_name) VALUES (?, ?) ON CONFLICT DO NOTHING", [owner, "tx"]);
  for (const id of ["s1", "s2"]) {
    writeFileSync(join(old, `${id}.jsonl`), "");
    await db.run("INSERT INTO chat_sessions (owner_id, id, session_file) VALUES (?, ?, ?)", [
      owner,
      id,
      join(old, `${id}.jsonl`),
    ]);
  }
  const paths = async () =>
    (
      await db.all<{ session_file: string }>(
        "SELECT session_file FROM chat_sessions WHERE owner_id = ? ORDER BY id",
        [owner],
      )
    ).map((r) => r.session_file);
  const before = await paths();
  await failingWith(db, ["chat_sessions", "UPDATE", "NEW.id = 's2'"], () => moveOwnerFolders(t.dataDir, db));
  expect(await paths()).toEqual(before);
  // The next run (the folder already moved) rewrites both.
  await moveOwnerFolders(t.dataDir, db);
  const after = await paths();
  expect(after).toHaveLength(2);
  for (const path of after) expect(path).not.toContain(chatHexLegacyName(owner));
});
