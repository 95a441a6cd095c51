/**
 * One sandbox per user behind a provider interface. The built-in local provider needs no key: where the
 * bubblewrap jail works, every signed-in user has a sandbox whose home is their own workspace folder
 * (the chat agent's shell commands run there, in the jail of server/sandbox/shell-jail.ts: own network
 * namespace, no host environment, the policy's limits). Where the jail is missing the provider is not
 * available: the sandbox routes answer 503 and protected mode refuses shell commands.
 * `APP_SANDBOX_PROVIDER=none` switches per-user sandboxes off on purpose.
 *
 * A remote provider (enabled by `SANDBOX_API_KEY` or a stored provider secret) would implement the same
 * interface; none is built in yet.
 */
import type { EnvSource } from "../../config/env.ts";
import type { Store } from "../../storage/store.ts";
import { ownerFolderName } from "../../workspace/owner-folders.ts";
import { detectSandbox } from "../isolation.ts";
import { type SandboxRecord, SandboxRegistry } from "./registry.ts";

export interface PreviewTarget {
  host: string;
  port: number;
}

export type Availability = { available: true } | { available: false; reason: string };

export interface SandboxProvider {
  readonly name: string;
  /** Whether this server can give users sandboxes at all (a reason when not). */
  availability(): Availability;
  /** The owner's sandbox, created (and recorded as started) when they have none yet. */
  ensure(owner: string): SandboxRecord;
  /** The owner's sandbox when it exists and is running. */
  active(owner: string): SandboxRecord | undefined;
  /** Where a preview of `port` inside the owner's sandbox is served from, when it can be reached. */
  previewTarget(owner: string, port: number): PreviewTarget | undefined;
  readonly registry: SandboxRegistry;
}

export class LocalSandboxProvider implements SandboxProvider {
  readonly name = "local";
  readonly registry: SandboxRegistry;

  constructor(
    store: Store,
    private readonly jailed: () => boolean = () => detectSandbox().shellPlan !== undefined,
  ) {
    this.registry = new SandboxRegistry(store);
  }

  availability(): Availability {
    return this.jailed()
      ? { available: true }
      : { available: false, reason: "the bubblewrap jail is not available on this host" };
  }

  ensure(owner: string): SandboxRecord {
    const found = this.registry.of(owner);
    if (found && found.state !== "deleted") return found;
    this.registry.put(owner, this.name, `atrium-user-${ownerFolderName(owner)}`, "started");
    return this.registry.of(owner) as SandboxRecord;
  }

  active(owner: string): SandboxRecord | undefined {
    const found = this.registry.of(owner);
    return found?.state === "started" ? found : undefined;
  }

  /**
   * The local jail runs each command in a fresh network namespace that ends with it, so there is no
   * long-lived server inside it to forward to yet.
   */
  previewTarget(): PreviewTarget | undefined {
    return undefined;
  }
}

/** Sandboxes switched off (`APP_SANDBOX_PROVIDER=none`). */
export class NoSandboxProvider extends LocalSandboxProvider {
  override availability(): Availability {
    return { available: false, reason: "per-user sandboxes are switched off (APP_SANDBOX_PROVIDER=none)" };
  }
}

export function sandboxProviderFor(env: EnvSource, store: Store): SandboxProvider {
  return env.get("APP_SANDBOX_PROVIDER") === "none"
    ? new NoSandboxProvider(store)
    : new LocalSandboxProvider(store);
}
