/**
 * Agents and fleets both hold memory entries: deleting either deletes its entries in the same
 * transaction, so no entry outlives its holder.
 */
import type { Db } from "../../storage/db/port.ts";

export type HolderKind = "agent" | "fleet";

const TABLE: Record<HolderKind, string> = { agent: "agents", fleet: "fleets" };

export function deleteHolder(db: Db, kind: HolderKind, owner: string, id: string): Promise<void> {
  return db.tx(async (tx) => {
    await tx.run("DELETE FROM memory_entries WHERE owner_id = ? AND holder_type = ? AND holder_id = ?", [
      owner,
      kind,
      id,
    ]);
    await tx.run(`DELETE FROM ${TABLE[kind]} WHERE id = ? AND owner_id = ?`, [id, owner]);
  });
}
