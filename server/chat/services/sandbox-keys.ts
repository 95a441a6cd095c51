/**
 * A user's own sandbox provider key ("bring your own key"), kept beside their model provider keys under
 * the id `sandbox` (never handed to pi with them) and never read back into a response. The remote provider asks `keyFor` per owner.
 */
import { type ChatProviderKeyStore, SANDBOX_KEY_ID } from "../stores/provider-keys.ts";

export class SandboxKeyService {
  constructor(private readonly keys: Pick<ChatProviderKeyStore, "sandboxKey" | "set" | "clear">) {}

  /** Synchronous, as the sandbox provider asks: the store's copy in memory. */
  keyFor = (owner: string): string | undefined => this.keys.sandboxKey(owner);

  configured(owner: string): boolean {
    return Boolean(this.keyFor(owner));
  }

  /** Stores the key, or clears it with null. */
  async save(owner: string, key: string | null): Promise<void> {
    if (key === null) await this.keys.clear(owner, SANDBOX_KEY_ID);
    else await this.keys.set(owner, SANDBOX_KEY_ID, key.trim());
  }
}
