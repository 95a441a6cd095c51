/**
 * Agents and fleets both hold memory entries: deleting either deletes its entries in the same
 * transaction, so no entry outlives its holder.
 */
import type { Store } from "../../storage/store.ts";

export type HolderKind = "agent" | "fleet";

const TABLE: Record<HolderKind, string> = { agent: "agents", fleet: "fleets" };

export function deleteHolder(store: Store, kind: HolderKind, owner: string, id: string): void {
  store.tx(() => {
    store.run(
      "DELETE FROM memory_entries WHERE owner_id = $owner AND holder_type = $kind AND holder_id = $id",
      { owner, kind, id },
    );
    store.run(`DELETE FROM ${TABLE[kind]} WHERE id = $id AND owner_id = $owner`, { id, owner });
  });
}
