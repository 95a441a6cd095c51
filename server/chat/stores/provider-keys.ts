/**
 * Provider keys an owner stored through `POST /api/chat/providers` (`chat_provider_keys`). They are
 * handed to the owner's pi sessions and never read back into a response.
 *
 * The users' own sandbox keys are also kept in memory (`sandboxKey`): the sandbox provider asks for one
 * synchronously (`availability(owner)`), so they are read once at start (`loadSandboxKeys`) and every
 * write of this store keeps the copy in step, after its statement (or its transaction) committed.
 */
import type { Db, Tx } from "../../storage/db/port.ts";

/** The row of a user's own sandbox provider key: kept here, never handed to pi with the model keys. */
export const SANDBOX_KEY_ID = "sandbox";

export class ChatProviderKeyStore {
  private readonly sandboxKeys = new Map<string, string>();

  constructor(private readonly db: Db) {}

  /** The owner's own sandbox key, from the copy in memory. */
  sandboxKey(owner: string): string | undefined {
    return this.sandboxKeys.get(owner);
  }

  /** Reads every stored sandbox key into memory (once, at start). */
  async loadSandboxKeys(): Promise<void> {
    const rows = await this.db.all<{ owner_id: string; api_key: string }>(
      "SELECT owner_id, api_key FROM chat_provider_keys WHERE provider = ?",
      [SANDBOX_KEY_ID],
    );
    this.sandboxKeys.clear();
    for (const row of rows) this.sandboxKeys.set(row.owner_id, row.api_key);
  }

  /** The owner's model provider keys by provider id (not their sandbox key). */
  async all(owner: string): Promise<Record<string, string>> {
    const rows = await this.db.all<{ provider: string; api_key: string }>(
      "SELECT provider, api_key FROM chat_provider_keys WHERE owner_id = ? AND provider <> ?",
      [owner, SANDBOX_KEY_ID],
    );
    return Object.fromEntries(rows.map((r) => [r.provider, r.api_key]));
  }

  /** One stored key. */
  async one(owner: string, provider: string): Promise<string | undefined> {
    const row = await this.db.get<{ api_key: string }>(
      "SELECT api_key FROM chat_provider_keys WHERE owner_id = ? AND provider = ?",
      [owner, provider],
    );
    return row?.api_key;
  }

  async set(owner: string, provider: string, key: string): Promise<void> {
    await this.db.run(
      `INSERT INTO chat_provider_keys (owner_id, provider, api_key) VALUES (?, ?, ?)
       ON CONFLICT (owner_id, provider) DO UPDATE SET api_key = excluded.api_key, updated_at = excluded.updated_at`,
      [owner, provider, key],
    );
    if (provider === SANDBOX_KEY_ID) this.sandboxKeys.set(owner, key);
  }

  async clear(owner: string, provider: string): Promise<boolean> {
    const { changes } = await this.db.run(
      "DELETE FROM chat_provider_keys WHERE owner_id = ? AND provider = ?",
      [owner, provider],
    );
    if (provider === SANDBOX_KEY_ID) this.sandboxKeys.delete(owner);
    return changes > 0;
  }

  /**
   * Deletes every key of an owner inside the caller's transaction (the copy in memory forgets theirs
   * once it commits); returns how many there were.
   */
  async eraseOwner(owner: string, tx: Tx): Promise<number> {
    const { changes } = await tx.run("DELETE FROM chat_provider_keys WHERE owner_id = ?", [owner]);
    tx.afterCommit(() => this.sandboxKeys.delete(owner));
    return changes;
  }
}
