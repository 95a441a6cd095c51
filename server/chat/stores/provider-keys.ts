/**
 * Provider keys an owner stored through `POST /api/chat/providers` (`chat_provider_keys`). They are
 * handed to the owner's pi sessions and never read back into a response.
 */
import type { Store } from "../../storage/store.ts";

/** The row of a user's own sandbox provider key: kept here, never handed to pi with the model keys. */
export const SANDBOX_KEY_ID = "sandbox";

export class ChatProviderKeyStore {
  constructor(private readonly db: Store) {}

  /** The owner's model provider keys by provider id (not their sandbox key). */
  all(owner: string): Record<string, string> {
    const rows = this.db.all<{ provider: string; api_key: string }>(
      "SELECT provider, api_key FROM chat_provider_keys WHERE owner_id = ? AND provider <> ?",
      [owner, SANDBOX_KEY_ID],
    );
    return Object.fromEntries(rows.map((r) => [r.provider, r.api_key]));
  }

  /** One stored key. */
  one(owner: string, provider: string): string | undefined {
    return this.db.get<{ api_key: string }>(
      "SELECT api_key FROM chat_provider_keys WHERE owner_id = ? AND provider = ?",
      [owner, provider],
    )?.api_key;
  }

  set(owner: string, provider: string, key: string): void {
    this.db.run(
      `INSERT INTO chat_provider_keys (owner_id, provider, api_key) VALUES (?, ?, ?)
       ON CONFLICT (owner_id, provider) DO UPDATE SET api_key = excluded.api_key, updated_at = excluded.updated_at`,
      [owner, provider, key],
    );
  }

  clear(owner: string, provider: string): boolean {
    return (
      this.db.run("DELETE FROM chat_provider_keys WHERE owner_id = ? AND provider = ?", [owner, provider])
        .changes > 0
    );
  }

  /** Deletes every key of an owner; returns how many there were. */
  eraseOwner(owner: string): number {
    return this.db.run("DELETE FROM chat_provider_keys WHERE owner_id = ?", [owner]).changes;
  }
}
