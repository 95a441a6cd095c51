/**
 * Which host uid each user's sandboxes run as (table `sandbox_uids`): an index into the users' part of
 * the uid range (server/sandbox/uids.ts), allocated at a user's first start and kept. All of its SQL is
 * here, so moving the store elsewhere touches this class only.
 *
 * A new user gets the index after the highest recorded one, so an index freed by a deleted user is not
 * handed out again until the range has been used up once; then the lowest free index. Two first starts
 * at once (two instances on PostgreSQL) cannot take one index: the UNIQUE index refuses the second,
 * which then tries again with the next free one.
 */
import { isUniqueViolation } from "../../storage/db/dialect.ts";
import type { Db, Queryable } from "../../storage/db/port.ts";

export class SandboxUidStore {
  constructor(private readonly db: Db) {}

  /** The owner's recorded index, if any. */
  async indexOf(owner: string, q: Queryable = this.db): Promise<number | undefined> {
    const row = await q.get<{ uid_index: number }>("SELECT uid_index FROM sandbox_uids WHERE owner_id = ?", [
      owner,
    ]);
    return row?.uid_index;
  }

  /** The owner's index, allocated now if they have none; throws when all `capacity` are taken. */
  async allocate(owner: string, capacity: number): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.tx(async (tx) => {
          const found = await this.indexOf(owner, tx);
          if (found !== undefined) return found;
          const next =
            (await tx.get<{ n: number | null }>("SELECT max(uid_index) + 1 AS n FROM sandbox_uids"))?.n ?? 0;
          const index = next < capacity ? next : await this.lowestFree(tx, capacity);
          if (index === undefined) throw new Error(`every one of the ${capacity} sandbox uids is taken`);
          await tx.run("INSERT INTO sandbox_uids (owner_id, uid_index) VALUES (?, ?)", [owner, index]);
          return index;
        });
      } catch (error) {
        // Another instance took this index (or recorded this owner) first: look again.
        if (!isUniqueViolation(error) || attempt >= 5) throw error;
      }
    }
  }

  private async lowestFree(q: Queryable, capacity: number): Promise<number | undefined> {
    const row = await q.get<{ n: number | null }>(
      `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM sandbox_uids WHERE uid_index = 0) THEN 0
         ELSE (SELECT min(a.uid_index) + 1 FROM sandbox_uids a WHERE NOT EXISTS
           (SELECT 1 FROM sandbox_uids b WHERE b.uid_index = a.uid_index + 1)) END AS n`,
    );
    const index = row?.n ?? undefined;
    return index !== undefined && index !== null && index < capacity ? index : undefined;
  }
}
