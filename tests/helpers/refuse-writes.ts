/**
 * Failure injection for the transaction tests (tests/storage/transactions-*.test.ts): a trigger that makes
 * the database itself refuse one kind of write to one table (optionally only for rows matching a
 * condition on NEW or OLD), on SQLite or PostgreSQL alike, so a store's real transaction fails part-way
 * through and the test can check that nothing of it stayed. The returned function drops the trigger.
 */
import type { Db } from "../../server/storage/db/port.ts";

export const REFUSED = "refused by the test";

let made = 0;

export async function refuseWrites(
  db: Db,
  table: string,
  op: "INSERT" | "UPDATE" | "DELETE",
  when?: string,
): Promise<() => Promise<void>> {
  const name = `test_refuse_${++made}`;
  if (db.engine === "postgres") {
    await db.exec(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION '${REFUSED}'; END $$;
      CREATE TRIGGER ${name} BEFORE ${op} ON ${table} FOR EACH ROW ${when ? `WHEN (${when})` : ""}
      EXECUTE FUNCTION ${name}()`);
    return () => db.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}()`);
  }
  await db.exec(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} ${when ? `WHEN ${when}` : ""}
    BEGIN SELECT RAISE(ABORT, '${REFUSED}'); END`);
  return () => db.exec(`DROP TRIGGER ${name}`);
}

/** Runs `fn` with the writes refused, expecting it to fail with the trigger's error; drops the trigger. */
export async function failingWith(
  db: Db,
  refusal: [table: string, op: "INSERT" | "UPDATE" | "DELETE", when?: string],
  fn: () => Promise<unknown>,
): Promise<void> {
  const undo = await refuseWrites(db, ...refusal);
  try {
    let error: unknown;
    await fn().catch((e) => {
      error = e;
    });
    if (!String(error).includes(REFUSED) && !String((error as { cause?: unknown })?.cause).includes(REFUSED))
      throw new Error(`expected the injected refusal, got ${String(error)}`);
  } finally {
    await undo();
  }
}

/** Rows of a table matching a condition (a count: what a test compares before and after). */
export async function rows(db: Db, table: string, where = "1 = 1", params: (string | number)[] = []) {
  return (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))?.n ?? 0;
}
