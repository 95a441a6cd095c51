/**
 * While stores move to the async port one family at a time, both kinds share one SQLite connection: a
 * synchronous store's write during an open async transaction would be rolled back with it, so it is refused.
 */
import { expect, test } from "bun:test";
import { openDatabase } from "../../server/storage/database.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { Store } from "../../server/storage/store.ts";

test("a synchronous store write is refused while an async transaction holds the connection, and works after", async () => {
  const db = openDatabase(":memory:");
  db.exec("CREATE TABLE t (a TEXT)");
  const store = new Store(db);
  const port = sqlitePort(db);
  let refused: unknown;
  await port
    .tx(async (tx) => {
      await tx.run("INSERT INTO t (a) VALUES (?)", ["async"]);
      try {
        store.run("INSERT INTO t (a) VALUES (?)", ["sync"]);
      } catch (error) {
        refused = error;
      }
      throw new Error("roll back");
    })
    .catch(() => undefined);
  expect(String(refused)).toContain("convert this store to the database port");
  expect(store.all("SELECT a FROM t")).toEqual([]);
  store.run("INSERT INTO t (a) VALUES (?)", ["sync"]);
  expect(store.all<{ a: string }>("SELECT a FROM t").map((r) => r.a)).toEqual(["sync"]);
  db.close();
});
