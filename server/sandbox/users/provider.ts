/**
 * One sandbox per user behind the provider interface (provider-api.ts). The built-in local provider
 * needs no key: where the bubblewrap jail works, every signed-in user gets one long-lived jail
 * (local-sandbox.ts), started on first use and kept until it is stopped: by `stop`, by a lifecycle
 * webhook, by the user's deletion (`atrium user delete` erases the registry row; a light reconciler
 * notices within a second), by the server's shutdown (`close`) or after an hour unused. Where the jail is missing the provider
 * is not available: the sandbox routes answer 503 and protected mode refuses the tools that need it.
 * `APP_SANDBOX_PROVIDER=none` switches per-user sandboxes off on purpose.
 *
 * At most `maxSandboxes` run at once (policy sandbox.max_user_sandboxes): a start beyond it stops the
 * least recently used idle sandbox (no command or preview connection in progress; its registry row stays
 * "started", so its next command starts it again, as after the idle time), or, when every one is busy,
 * fails with a message saying so. Started by root, each user's jail runs as that user's own host uid
 * (uids.ts, recorded by uid-store.ts), and the workspace quota's watchdog measures what it stores.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvSource } from "../../config/env.ts";
import type { Db } from "../../storage/db/port.ts";
import { ownerFolderName, ownerFolders } from "../../workspace/owner-folders.ts";
import { confinementFor } from "../confinement.ts";
import { detectSandbox } from "../isolation.ts";
import type { JailPlan } from "../jail.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "../limits.ts";
import type { QuotaWatch } from "../quota-watch.ts";
import { assertUidRange, DEFAULT_UID_BASE, USER_UIDS, userUid } from "../uids.ts";
import { prepareWorkspace, SANDBOX_HOME, SANDBOX_WORKSPACE, stagingTools } from "./jail-command.ts";
import { UserSandbox } from "./local-sandbox.ts";
import type {
  Availability,
  PreviewUpstream,
  SandboxExecOptions,
  SandboxProcess,
  SandboxProvider,
} from "./provider-api.ts";
import { type SandboxRecord, SandboxRegistry } from "./registry.ts";
import { PreviewRelays } from "./relay.ts";
import { RemoteSandboxProvider, remoteSandboxConfig } from "./remote.ts";
import { SandboxUidStore } from "./uid-store.ts";

export type {
  Availability,
  PreviewUpstream,
  SandboxExecOptions,
  SandboxProcess,
  SandboxProvider,
} from "./provider-api.ts";

/** How often running sandboxes are checked against the registry (a user deleted by the CLI). */
const RECONCILE_MS = 1000;
/** A sandbox nobody used (no command, no preview request) for this long is stopped. */
export const SANDBOX_IDLE_MS = 60 * 60 * 1000;
/** Sandboxes running at once unless the policy says otherwise (sandbox.max_user_sandboxes). */
export const DEFAULT_MAX_SANDBOXES = 32;

export interface LocalSandboxOptions {
  dataDir: string;
  limits?: SandboxLimits;
  network?: "none" | "egress";
  /** The jail plan; default: detected (the unprivileged one when the server is root). */
  plan?: () => JailPlan | undefined;
  /** Idle time before a sandbox is stopped (default SANDBOX_IDLE_MS). */
  idleMs?: number;
  /** Most sandboxes running at once (policy sandbox.max_user_sandboxes; default DEFAULT_MAX_SANDBOXES). */
  maxSandboxes?: number;
  /** First of the host uids sandboxes run as when the server is root (policy sandbox.uid_base). */
  uidBase?: number;
  /** The workspace quota's watchdog; none: what a sandbox stores is not measured. */
  quota?: QuotaWatch;
}

/** Every sandbox the server may run is busy: the start is refused. */
export class SandboxCapacityError extends Error {
  override name = "SandboxCapacityError";
}

interface Running {
  sandbox: UserSandbox;
  relays: PreviewRelays;
  lastUsed: number;
}

/** The jail a long-lived sandbox runs in: turns' unprivileged plan when it can be staged, else the shell's. */
function detectedPlan(): JailPlan | undefined {
  const { plan, shellPlan } = detectSandbox();
  if (plan?.dropTo && stagingTools()) return plan;
  return shellPlan;
}

export class LocalSandboxProvider implements SandboxProvider {
  readonly name: string = "local";
  readonly registry: SandboxRegistry;
  readonly uids: SandboxUidStore;
  readonly home = SANDBOX_HOME;
  readonly workspace = SANDBOX_WORKSPACE;
  private readonly running = new Map<string, Running>();
  private readonly starting = new Map<string, Promise<Running>>();
  private readonly plan: () => JailPlan | undefined;
  private socketDir: string | undefined;
  private reconciler: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    db: Db,
    private readonly options: LocalSandboxOptions,
  ) {
    this.registry = new SandboxRegistry(db);
    this.uids = new SandboxUidStore(db);
    this.plan = options.plan ?? detectedPlan;
  }

  availability(): Availability {
    return this.plan()
      ? { available: true }
      : { available: false, reason: "the bubblewrap jail is not available on this host" };
  }

  async ensure(owner: string): Promise<SandboxRecord> {
    await this.sandbox(owner);
    return (await this.registry.of(owner)) as SandboxRecord;
  }

  async active(owner: string): Promise<SandboxRecord | undefined> {
    const found = await this.registry.of(owner);
    return found?.state === "started" && this.running.get(owner)?.sandbox.running ? found : undefined;
  }

  /** The host uid the owner's jail runs as, once recorded (a root server); undefined otherwise. */
  async hostUid(owner: string): Promise<number | undefined> {
    const index = await this.uids.indexOf(owner);
    return index === undefined ? undefined : userUid(this.uidBase, index);
  }

  /** Sandboxes running or starting now. */
  get liveCount(): number {
    return this.running.size + this.starting.size;
  }

  private get uidBase(): number {
    return this.options.uidBase ?? DEFAULT_UID_BASE;
  }

  /** The host pid of the owner's running jail (its processes are this pid's descendants). */
  jailPid(owner: string): number | undefined {
    const running = this.running.get(owner);
    return running?.sandbox.running ? running.sandbox.pid : undefined;
  }

  async exec(owner: string, command: string, options: SandboxExecOptions) {
    const running = await this.sandbox(owner);
    running.lastUsed = Date.now();
    try {
      return await running.sandbox.exec(command, options);
    } finally {
      running.lastUsed = Date.now();
    }
  }

  async open(owner: string, command: string, onData: (data: Buffer) => void): Promise<SandboxProcess> {
    const running = await this.sandbox(owner);
    running.lastUsed = Date.now();
    return running.sandbox.open(command, onData);
  }

  async preview(owner: string, port: number): Promise<PreviewUpstream | undefined> {
    if (!(await this.active(owner))) return undefined;
    const running = this.running.get(owner) as Running;
    running.lastUsed = Date.now();
    return { url: `http://localhost:${port}`, unix: running.relays.socketFor(port) };
  }

  async stop(owner: string): Promise<void> {
    await this.halt(owner);
    if (await this.registry.of(owner)) await this.registry.setState(owner, "stopped");
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reconciler);
    await Promise.all([...this.running.keys()].map((owner) => this.halt(owner)));
    if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
  }

  /** Ends the owner's jail (if running) without touching the registry. */
  private async halt(owner: string): Promise<void> {
    const running = this.running.get(owner) ?? (await this.starting.get(owner)?.catch(() => undefined));
    if (!running) return;
    if (this.running.get(owner) === running) this.running.delete(owner);
    running.relays.close();
    await running.sandbox.stop();
  }

  /** The owner's running sandbox, started when it is not (one start at a time per owner). */
  private async sandbox(owner: string): Promise<Running> {
    if (this.closed) throw new Error("The server is shutting down");
    const found = this.running.get(owner);
    if (found?.sandbox.running) return found;
    const pending = this.starting.get(owner);
    if (pending) return pending;
    // Room is made (or refused) before the start is counted, synchronously: parallel starts see it.
    const room = this.makeRoom();
    const start = room.then(() => this.start(owner)).finally(() => this.starting.delete(owner));
    this.starting.set(owner, start);
    return start;
  }

  /**
   * Below the cap, nothing; at it, stops the least recently used idle sandbox (forgotten now, so the
   * count drops at once; awaited before the new one starts); with none idle, refuses the start.
   */
  private makeRoom(): Promise<void> {
    const max = this.options.maxSandboxes ?? DEFAULT_MAX_SANDBOXES;
    if (this.liveCount < max) return Promise.resolve();
    let oldest: [string, Running] | undefined;
    for (const entry of this.running) {
      if (entry[1].sandbox.busy > 0) continue;
      if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    if (!oldest) {
      return Promise.reject(
        new SandboxCapacityError(
          `All ${max} sandboxes this server runs at once are busy (policy sandbox.max_user_sandboxes); try again when a command finishes`,
        ),
      );
    }
    const [owner, running] = oldest;
    this.running.delete(owner);
    running.relays.close();
    return running.sandbox.stop();
  }

  private async start(owner: string): Promise<Running> {
    const plan = this.plan();
    if (!plan) throw new Error("Sandbox not available: the bubblewrap jail is not available on this host");
    const limits = this.options.limits ?? DEFAULT_LIMITS;
    const workspaceDir = ownerFolders(this.options.dataDir, owner).workspace;
    let uid: number | undefined;
    if (plan.dropTo) {
      assertUidRange(this.uidBase);
      uid = userUid(this.uidBase, await this.uids.allocate(owner, USER_UIDS));
    }
    prepareWorkspace(workspaceDir, uid);
    const sandbox = new UserSandbox(
      {
        plan,
        limits,
        network: this.options.network ?? "none",
        confinement: confinementFor("bubblewrap", limits),
        ...(this.options.quota ? { quota: this.options.quota } : {}),
        ...(uid === undefined ? {} : { uid }),
      },
      workspaceDir,
    );
    await sandbox.ready;
    this.socketDir ??= mkdtempSync(join(tmpdir(), "atrium-previews-"));
    const relays = new PreviewRelays(sandbox, this.socketDir, ownerFolderName(owner));
    const running: Running = { sandbox, relays, lastUsed: Date.now() };
    this.running.set(owner, running);
    void sandbox.exited.then(() => {
      running.relays.close();
      if (this.running.get(owner) === running) this.running.delete(owner);
    });
    await this.registry.put(owner, this.name, sandboxIdOf(owner), "started");
    this.reconcileSoon();
    return running;
  }

  /** While sandboxes run: stop idle ones, and those whose registry row is gone or no longer "started". */
  private reconcileSoon(): void {
    if (this.reconciler) return;
    this.reconciler = setInterval(() => void this.reconcile(), RECONCILE_MS);
    this.reconciler.unref?.();
  }

  private async reconcile(): Promise<void> {
    {
      if (this.running.size === 0) {
        clearInterval(this.reconciler);
        this.reconciler = undefined;
        return;
      }
      const idleSince = Date.now() - (this.options.idleMs ?? SANDBOX_IDLE_MS);
      for (const [owner, running] of this.running) {
        // Idle: its processes end; the registry still says started, so a preview or command restarts it.
        if (running.lastUsed < idleSince && running.sandbox.busy === 0) {
          void this.halt(owner);
          continue;
        }
        let state: string | undefined;
        try {
          state = (await this.registry.of(owner))?.state;
        } catch {
          continue; // the database is closing
        }
        // Still this jail (it may have stopped or been replaced while the row was read).
        if (state !== "started" && this.running.get(owner) === running) void this.halt(owner);
      }
    }
  }
}

/** The sandbox id the registry and the provider's webhooks name. */
export function sandboxIdOf(owner: string): string {
  return `atrium-user-${ownerFolderName(owner)}`;
}

/** Sandboxes switched off (`APP_SANDBOX_PROVIDER=none`). */
export class NoSandboxProvider extends LocalSandboxProvider {
  override availability(): Availability {
    return { available: false, reason: "per-user sandboxes are switched off (APP_SANDBOX_PROVIDER=none)" };
  }
}

/**
 * The server's provider: `APP_SANDBOX_PROVIDER=none` switches sandboxes off, `local` forces the jail,
 * `remote` (or, unset, a `SANDBOX_API_KEY`) selects the remote provider (remote-config.ts), else the
 * local jail. A value other than these stops the start with a clear line.
 */
export function sandboxProviderFor(
  env: EnvSource,
  db: Db,
  options: LocalSandboxOptions,
  /** A user's own stored provider key, for the remote provider (it wins over the server's for them). */
  keyFor?: (owner: string) => string | undefined,
): SandboxProvider {
  const remote = remoteSandboxConfig(env);
  if (remote) return new RemoteSandboxProvider(db, remote, keyFor ? { keyFor } : {});
  return env.get("APP_SANDBOX_PROVIDER") === "none"
    ? new NoSandboxProvider(db, { ...options, plan: () => undefined })
    : new LocalSandboxProvider(db, options);
}
