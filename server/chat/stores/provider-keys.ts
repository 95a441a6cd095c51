/**
 * Provider keys an owner stored through `POST /api/chat/providers` (`chat_provider_keys`). They are
 * handed to the owner's pi sessions and never read back into a response.
 */
import type { Store } from "../../storage/store.ts";

export class ChatProviderKeyStore {
  constructor(private readonly db: Store) {}

  /** The owner's keys by provider id. */
  all(owner: string): Record<string, string> {
    const rows = this.db.all<{ provider: string; api_key: string }>(
      "SELECT provider, api_key FROM chat_provider_keys WHERE owner_id = ?",
      [owner],
    );
    return Object.fromEntries(rows.map((r) => [r.provider, r.api_key]));
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
