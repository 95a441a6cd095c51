/**
 * The remote sandbox provider: each owner's commands run in their own Daytona sandbox (the provider the
 * origin app used), named `atrium-user-<owner folder>`, with home `/home/daytona` and the persistent
 * workspace `/home/daytona/agent-workspace`. It meets the same `SandboxProvider` contract as the local
 * jail, so the chat tools and sandbox routes do not know which one runs.
 *
 * The API key is the server's `SANDBOX_API_KEY` unless the owner stored their own (`keyFor`), in which
 * case their sandbox lives in their own provider account. Concurrent `ensure` calls for one owner share
 * one lookup-or-create, so an owner never gets two sandboxes from one server; a name conflict (another
 * server created it first) is resolved by looking the sandbox up by name.
 */
import { posix } from "node:path";
import type { Db } from "../../storage/db/port.ts";
import { ownerFolderName } from "../../workspace/owner-folders.ts";
import type { Availability, PreviewUpstream, SandboxExecOptions, SandboxProvider } from "./provider-api.ts";
import { type SandboxRecord, SandboxRegistry } from "./registry.ts";
import { DaytonaClient, type DaytonaSandbox, RemoteSandboxError } from "./remote-client.ts";
import type { RemoteSandboxConfig } from "./remote-config.ts";
import { runRemoteCommand } from "./remote-exec.ts";

export { RemoteSandboxError } from "./remote-client.ts";
export { type RemoteSandboxConfig, remoteSandboxConfig } from "./remote-config.ts";

export const REMOTE_HOME = "/home/daytona";
export const PREVIEW_TOKEN_HEADER = "x-daytona-preview-token";

export interface RemoteProviderOptions {
  /** The owner's own stored provider key, which overrides the server's for their sandbox. */
  keyFor?: (owner: string) => string | undefined;
}

/** An owner's running sandbox and how to reach its toolbox. */
interface Ready {
  record: SandboxRecord;
  key: string;
  toolbox: string;
}

export function remoteSandboxName(owner: string): string {
  return `atrium-user-${ownerFolderName(owner)}`;
}

export class RemoteSandboxProvider implements SandboxProvider {
  readonly name = "remote";
  readonly registry: SandboxRegistry;
  readonly home = REMOTE_HOME;
  readonly workspace = `${REMOTE_HOME}/agent-workspace`;
  private readonly client: DaytonaClient;
  private readonly pending = new Map<string, Promise<Ready>>();
  /** Sandboxes whose workspace folder this process has made sure of. */
  private readonly prepared = new Set<string>();
  /** Owners whose sandbox this process started or created (stopped again by `close`). */
  private readonly startedHere = new Set<string>();

  constructor(
    db: Db,
    private readonly config: RemoteSandboxConfig,
    private readonly options: RemoteProviderOptions = {},
  ) {
    this.registry = new SandboxRegistry(db);
    this.client = new DaytonaClient(config);
  }

  availability(owner?: string): Availability {
    const key = owner === undefined ? this.config.apiKey : this.keyOf(owner);
    if (key || (owner === undefined && this.options.keyFor)) return { available: true };
    return { available: false, reason: "no sandbox provider key is configured (SANDBOX_API_KEY)" };
  }

  async ensure(owner: string): Promise<SandboxRecord> {
    return (await this.ready(owner)).record;
  }

  async active(owner: string): Promise<SandboxRecord | undefined> {
    const found = await this.registry.of(owner);
    return found?.provider === this.name && found.state === "started" ? found : undefined;
  }

  async exec(
    owner: string,
    command: string,
    options: SandboxExecOptions,
  ): Promise<{ exitCode: number | null }> {
    const stop = new AbortController();
    const limit = options.timeout && options.timeout > 0 ? options.timeout : undefined;
    const timer = limit ? setTimeout(() => stop.abort("timeout"), limit * 1000) : undefined;
    const onAbort = () => stop.abort("aborted");
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (stop.signal.aborted) throw stop.signal.reason;
      const ready = await untilStopped(this.ready(owner), stop.signal);
      const run = {
        client: this.client,
        key: ready.key,
        toolbox: ready.toolbox,
        cwd: this.workspace,
        command,
      };
      return await runRemoteCommand(
        { ...run, pollIntervalMs: this.config.pollIntervalMs, stop: stop.signal },
        (d) => options.onData(d),
      );
    } catch (error) {
      if (stop.signal.aborted)
        throw new Error(stop.signal.reason === "timeout" ? `timeout:${limit}` : "aborted");
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  async preview(owner: string, port: number): Promise<PreviewUpstream | undefined> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
    const record = await this.active(owner);
    if (!record) return undefined;
    const key = this.requireKey(owner);
    const path = `/sandbox/${encodeURIComponent(record.sandboxId)}/ports/${port}/preview-url`;
    const link = await this.client.json<{ url?: unknown; token?: unknown }>(
      key,
      "GET",
      this.client.apiUrl(path),
      {
        allowNotFound: true,
      },
    );
    if (!link) return undefined;
    if (typeof link.url !== "string" || !/^https?:\/\//i.test(link.url))
      throw new RemoteSandboxError(`The ${this.client.label} gave no usable preview URL for port ${port}`);
    const headers: Record<string, string> = {};
    if (typeof link.token === "string" && link.token) headers[PREVIEW_TOKEN_HEADER] = link.token;
    return { url: link.url.replace(/\/+$/, ""), headers };
  }

  async stop(owner: string): Promise<void> {
    const record = await this.registry.of(owner);
    if (!record || record.provider !== this.name || record.state === "deleted") return;
    const path = `/sandbox/${encodeURIComponent(record.sandboxId)}/stop`;
    const done = await this.client.call(this.requireKey(owner), "POST", this.client.apiUrl(path), {
      allowNotFound: true,
    });
    await this.registry.setState(owner, done ? "stopped" : "deleted");
    this.startedHere.delete(owner);
  }

  /** Deletes the owner's sandbox on the provider (their workspace with it), e.g. when a user is deleted. */
  async remove(owner: string): Promise<void> {
    const record = await this.registry.of(owner);
    if (!record || record.provider !== this.name || record.state === "deleted") return;
    const path = `/sandbox/${encodeURIComponent(record.sandboxId)}`;
    await this.client.call(this.requireKey(owner), "DELETE", this.client.apiUrl(path), {
      allowNotFound: true,
    });
    await this.registry.setState(owner, "deleted");
    this.prepared.delete(record.sandboxId);
    this.startedHere.delete(owner);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.startedHere].map((owner) => this.stop(owner)));
  }

  /** A file of the owner's workspace (`path` relative to it, or absolute inside it). */
  async readFile(owner: string, path: string): Promise<Uint8Array> {
    const target = this.confine(path);
    const ready = await this.ready(owner);
    const url = `${ready.toolbox}/files/download?path=${encodeURIComponent(target)}`;
    const result = await this.client.call(ready.key, "GET", url, { allowNotFound: true });
    if (!result) throw new RemoteSandboxError(`No such file in the sandbox workspace: ${target}`, 404);
    return result.bytes;
  }

  /** Writes a file of the owner's workspace (parent folders are created by the provider). */
  async writeFile(owner: string, path: string, bytes: Uint8Array): Promise<void> {
    const target = this.confine(path);
    const ready = await this.ready(owner);
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(bytes)]), posix.basename(target));
    const url = `${ready.toolbox}/files/upload?path=${encodeURIComponent(target)}`;
    await this.client.call(ready.key, "POST", url, { body: form });
  }

  /** The absolute path of `path` inside the workspace; throws before any request when it leaves it. */
  confine(path: string): string {
    if (typeof path !== "string" || path === "" || path.includes("\0"))
      throw new RemoteSandboxError("A sandbox file path must be a non-empty string without NUL", 400);
    const absolute = posix.normalize(posix.isAbsolute(path) ? path : posix.join(this.workspace, path));
    if (absolute === this.workspace || !absolute.startsWith(`${this.workspace}/`))
      throw new RemoteSandboxError(`Path is outside the sandbox workspace (${this.workspace}): ${path}`, 400);
    return absolute;
  }

  private keyOf(owner: string): string | undefined {
    return this.options.keyFor?.(owner) || this.config.apiKey;
  }

  private requireKey(owner: string): string {
    const key = this.keyOf(owner);
    if (!key)
      throw new RemoteSandboxError(
        "Sandbox not available: no sandbox provider key is configured (SANDBOX_API_KEY)",
        503,
      );
    return key;
  }

  /** The owner's started sandbox, found, created or started as needed; one at a time per owner. */
  private ready(owner: string): Promise<Ready> {
    let pending = this.pending.get(owner);
    if (!pending) {
      pending = this.bringUp(owner).finally(() => this.pending.delete(owner));
      this.pending.set(owner, pending);
    }
    return pending;
  }

  private async bringUp(owner: string): Promise<Ready> {
    const key = this.requireKey(owner);
    const name = remoteSandboxName(owner);
    const known = await this.registry.of(owner);
    let box: DaytonaSandbox | undefined;
    if (known?.provider === this.name && known.state !== "deleted")
      box = await this.lookup(key, known.sandboxId);
    box ??= await this.lookup(key, name);
    if (!box || box.state === "destroyed") box = await this.create(key, name);
    box = await this.untilStarted(key, box);
    const toolbox = this.client.toolboxBase(
      box.toolboxProxyUrl ?? (await this.toolboxUrl(key, box.id)),
      box.id,
    );
    if (!this.prepared.has(box.id)) {
      const folder = `${toolbox}/files/folder?path=${encodeURIComponent(this.workspace)}&mode=755`;
      await this.client.call(key, "POST", folder);
      this.prepared.add(box.id);
    }
    await this.registry.put(owner, this.name, box.id, "started");
    this.startedHere.add(owner);
    return { record: (await this.registry.of(owner)) as SandboxRecord, key, toolbox };
  }

  private lookup(key: string, idOrName: string): Promise<DaytonaSandbox | undefined> {
    const url = this.client.apiUrl(`/sandbox/${encodeURIComponent(idOrName)}`);
    return this.client.json<DaytonaSandbox>(key, "GET", url, { allowNotFound: true });
  }

  private async create(key: string, name: string): Promise<DaytonaSandbox> {
    const body: Record<string, unknown> = { name, labels: { app: "atrium", "atrium-sandbox": name } };
    if (this.config.target) body.target = this.config.target;
    try {
      const box = await this.client.json<DaytonaSandbox>(key, "POST", this.client.apiUrl("/sandbox"), {
        json: body,
      });
      if (!box?.id) throw new RemoteSandboxError(`The ${this.client.label} created a sandbox but gave no id`);
      return box;
    } catch (error) {
      // Another server (or an earlier run cut short) created it first: use that one.
      const existing =
        error instanceof RemoteSandboxError && error.status === 409 && (await this.lookup(key, name));
      if (existing) return existing;
      throw error;
    }
  }

  /** Starts a stopped or archived sandbox and waits (bounded) until the provider reports it started. */
  private async untilStarted(key: string, first: DaytonaSandbox): Promise<DaytonaSandbox> {
    const deadline = Date.now() + this.config.startTimeoutMs;
    let box = first;
    let startAsked = false;
    let pause = 50;
    for (;;) {
      const state = box.state ?? "unknown";
      if (state === "started") return box;
      if (state === "error" || state === "build_failed")
        throw new RemoteSandboxError(
          `The ${this.client.label} reports sandbox ${box.name ?? box.id} in state ${state}` +
            (box.errorReason ? `: ${box.errorReason.slice(0, 200)}` : ""),
        );
      if (["stopped", "archived", "paused"].includes(state) && !startAsked) {
        const path = `/sandbox/${encodeURIComponent(box.id)}/start`;
        box = (await this.client.json<DaytonaSandbox>(key, "POST", this.client.apiUrl(path))) ?? box;
        startAsked = true;
        continue;
      }
      if (Date.now() > deadline)
        throw new RemoteSandboxError(
          `The ${this.client.label} did not start sandbox ${box.name ?? box.id} within ` +
            `${Math.ceil(this.config.startTimeoutMs / 1000)} s (state ${state})`,
        );
      await Bun.sleep(pause);
      pause = Math.min(pause * 2, this.config.pollIntervalMs);
      const fresh = await this.lookup(key, box.id);
      if (!fresh)
        throw new RemoteSandboxError(`The ${this.client.label} lost sandbox ${box.name ?? box.id}`, 404);
      box = fresh;
    }
  }

  private async toolboxUrl(key: string, id: string): Promise<string> {
    const path = `/sandbox/${encodeURIComponent(id)}/toolbox-proxy-url`;
    const found = await this.client.json<{ url?: string }>(key, "GET", this.client.apiUrl(path));
    if (!found?.url)
      throw new RemoteSandboxError(`The ${this.client.label} gave no toolbox URL for sandbox ${id}`);
    return found.url;
  }
}

/** `promise`, or a rejection as soon as `signal` fires (the shared work goes on for other callers). */
function untilStopped<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
