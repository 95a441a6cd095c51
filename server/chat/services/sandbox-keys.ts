/**
 * A user's own sandbox provider key ("bring your own key"), kept beside their model provider keys under
 * the id `sandbox` (never handed to pi with them) and never read back into a response. The remote provider asks `keyFor` per owner.
 */
import { type ChatProviderKeyStore, SANDBOX_KEY_ID } from "../stores/provider-keys.ts";

export class SandboxKeyService {
  constructor(private readonly keys: Pick<ChatProviderKeyStore, "one" | "set" | "clear">) {}

  keyFor = (owner: string): string | undefined => this.keys.one(owner, SANDBOX_KEY_ID);

  configured(owner: string): boolean {
    return Boolean(this.keyFor(owner));
  }

  /** Stores the key, or clears it with null. */
  save(owner: string, key: string | null): void {
    if (key === null) this.keys.clear(owner, SANDBOX_KEY_ID);
    else this.keys.set(owner, SANDBOX_KEY_ID, key.trim());
  }
}
