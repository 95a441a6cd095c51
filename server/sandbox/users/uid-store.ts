/**
 * Which host uid each user's sandboxes run as (table `sandbox_uids`): an index into the users' part of
 * the uid range (server/sandbox/uids.ts), allocated at a user's first start and kept. All of its SQL is
 * here, so moving the store elsewhere touches this class only.
 *
 * A new user gets the index after the highest recorded one, so an index freed by a deleted user is not
 * handed out again until the range has been used up once; then the lowest free index.
 */
import type { Store } from "../../storage/store.ts";

export class SandboxUidStore {
  constructor(private readonly store: Store) {}

  /** The owner's recorded index, if any. */
  indexOf(owner: string): number | undefined {
    return this.store.get<{ uid_index: number }>("SELECT uid_index FROM sandbox_uids WHERE owner_id = ?", [
      owner,
    ])?.uid_index;
  }

  /** The owner's index, allocated now if they have none; throws when all `capacity` are taken. */
  allocate(owner: string, capacity: number): number {
    return this.store.tx(() => {
      const found = this.indexOf(owner);
      if (found !== undefined) return found;
      const next =
        this.store.get<{ n: number | null }>("SELECT max(uid_index) + 1 AS n FROM sandbox_uids")?.n ?? 0;
      const index = next < capacity ? next : this.lowestFree(capacity);
      if (index === undefined) throw new Error(`every one of the ${capacity} sandbox uids is taken`);
      this.store.run("INSERT INTO sandbox_uids (owner_id, uid_index) VALUES (?, ?)", [owner, index]);
      return index;
    });
  }

  private lowestFree(capacity: number): number | undefined {
    const row = this.store.get<{ n: number | null }>(
      `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM sandbox_uids WHERE uid_index = 0) THEN 0
         ELSE (SELECT min(a.uid_index) + 1 FROM sandbox_uids a WHERE NOT EXISTS
           (SELECT 1 FROM sandbox_uids b WHERE b.uid_index = a.uid_index + 1)) END AS n`,
    );
    const index = row?.n ?? undefined;
    return index !== undefined && index !== null && index < capacity ? index : undefined;
  }
}
