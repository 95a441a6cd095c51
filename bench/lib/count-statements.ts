/**
 * Counts the statements a database port runs, for the benches that report round trips per request path
 * (a transaction's BEGIN and COMMIT count: each is a round trip on PostgreSQL). Wraps the port in place.
 */
import type { Db, Tx } from "../../server/storage/db/port.ts";

export function countStatements(db: Db): { count: number; sql?: string[] } {
  const counter: { count: number; sql?: string[] } = { count: 0 };
  const counted =
    <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R => {
      counter.count++;
      // Set `sql` to an array to see which statements a path makes.
      counter.sql?.push(String(args[0]).replace(/\s+/g, " ").slice(0, 110));
      return f(...args);
    };
  const wrapTx = (inner: Tx): Tx => ({
    all: counted(inner.all.bind(inner)) as Tx["all"],
    get: counted(inner.get.bind(inner)) as Tx["get"],
    run: counted(inner.run.bind(inner)),
    exec: counted(inner.exec.bind(inner)),
    tx: (fn) => inner.tx((t) => fn(wrapTx(t))),
    afterCommit: (cb) => inner.afterCommit(cb),
  });
  // `get` reads through `all` on both adapters: counting `all` counts it once.
  const d = db as unknown as Record<string, unknown>;
  d.all = counted(db.all.bind(db));
  d.run = counted(db.run.bind(db));
  d.exec = counted(db.exec.bind(db));
  const tx = db.tx.bind(db);
  d.tx = <T>(fn: (t: Tx) => Promise<T>) => {
    counter.count += 2;
    counter.sql?.push("BEGIN … COMMIT");
    return tx((t) => fn(wrapTx(t)));
  };
  return counter;
}
