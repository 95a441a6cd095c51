/**
 * One user's running sandbox, host side: the jailed command runner (jail-command.ts, runner.ts) and the
 * JSON-lines channel to it. Commands run in the runner's jail, so what they start in the background
 * keeps running until the sandbox stops; previews open TCP connections from inside the jail, so a
 * server bound to the jail's own 127.0.0.1 answers (relay.ts exposes them to the host).
 *
 * Everything the runner says is treated as hostile input: a jailed command can write to the runner's
 * stdout itself (same uid). Lines are bounded (a longer one stops the sandbox), fields are checked,
 * and a message can only touch this sandbox's own commands and connections.
 *
 * While it runs, the workspace quota's watchdog (quota-watch.ts) measures what it stores; past the quota
 * the sandbox is stopped and the command in progress fails with the watchdog's message.
 */
import { readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import { oomKills } from "../cgroup.ts";
import type { Confinement } from "../confinement.ts";
import type { JailPlan } from "../jail.ts";
import type { SandboxLimits } from "../limits.ts";
import { attachPasta, findPasta, readJailPid, release } from "../network.ts";
import { processTree } from "../process-tree.ts";
import type { QuotaWatch } from "../quota-watch.ts";
import { sandboxJailCommand } from "./jail-command.ts";
import type { SandboxExecOptions } from "./provider-api.ts";

/** Longer than any honest line (the runner sends ≤ 64 KiB chunks, base64-encoded). */
const MAX_LINE_CHARS = 1024 * 1024;
/** The runner answers its first line within this time, or the start failed. */
const START_TIMEOUT_MS = 15_000;

export interface SandboxJail {
  plan: JailPlan;
  limits: SandboxLimits;
  network: "none" | "egress";
  confinement: Confinement;
  /** The workspace quota's watchdog; none: the workspace is not measured (tools, benchmarks). */
  quota?: QuotaWatch;
  /** The host uid the jail runs as when the plan drops to one (a root server). */
  uid?: number;
}

/** The far end of one preview connection (relay.ts). */
export interface ConnectionPeer {
  opened(): void;
  data(bytes: Buffer): void;
  closed(): void;
}

interface PendingExec {
  onData(data: Buffer): void;
  done(code: number | null): void;
  failed(error: Error): void;
}

export class UserSandbox {
  readonly exited: Promise<void>;
  readonly ready: Promise<void>;
  private readonly proc: Subprocess;
  private readonly execs = new Map<number, PendingExec>();
  private readonly connections = new Map<number, ConnectionPeer>();
  private nextId = 1;
  private pasta: Subprocess | undefined;
  private alive = true;
  private memory = false;
  /** Why the server stopped the sandbox (its quota), told to the commands it ended. */
  private stoppedFor: Error | undefined;
  private markReady!: () => void;

  constructor(
    private readonly jail: SandboxJail,
    workspaceDir: string,
  ) {
    const egress = jail.network === "egress" && findPasta() !== undefined;
    const args = sandboxJailCommand({
      plan: jail.plan,
      limits: jail.limits,
      workspaceDir,
      egress,
      ...(jail.uid === undefined ? {} : { uid: jail.uid }),
    });
    this.proc = Bun.spawn(args, {
      env: {},
      cwd: "/",
      stdio: egress ? ["pipe", "pipe", "ignore", "pipe", "pipe"] : ["pipe", "pipe", "ignore"],
    });
    const pid = this.proc.pid;
    jail.confinement.watch(pid, () => {
      this.memory = true;
      this.proc.kill("SIGKILL");
    });
    let failStart!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      failStart = reject;
    });
    const unwatch = jail.quota?.watch(
      workspaceDir,
      (error) => {
        this.stoppedFor = error;
        void this.stop();
      },
      () => processTree(pid),
    );
    this.exited = this.proc.exited.then(() => {
      this.alive = false;
      unwatch?.();
      this.memory = jail.confinement.exited(pid) === "memory" || this.memory;
      this.pasta?.kill("SIGKILL");
      failStart(this.stoppedFor ?? new Error("the sandbox did not start"));
      const error =
        this.stoppedFor ??
        (this.memory ? this.memoryError() : new Error("The sandbox stopped while the command ran"));
      for (const pending of this.execs.values()) pending.failed(error);
      this.execs.clear();
      for (const peer of this.connections.values()) peer.closed();
      this.connections.clear();
    });
    const timer = setTimeout(
      () => failStart(new Error("the sandbox did not start in time")),
      START_TIMEOUT_MS,
    );
    this.ready = ready.finally(() => clearTimeout(timer));
    this.ready.catch(() => this.kill());
    if (egress) void this.attachNetwork();
    void this.readLoop();
  }

  private memoryError(): Error {
    const mib = Math.round(this.jail.limits.memoryBytes / 1024 / 1024);
    return new Error(
      `The command used more than ${mib} MiB of memory (policy sandbox.memory_mb) and was stopped`,
    );
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Commands and preview connections in progress. */
  get busy(): number {
    return this.execs.size + this.connections.size;
  }

  get running(): boolean {
    return this.alive;
  }

  /** pasta on the jail's network namespace before the runner is let go (egress fails closed). */
  private async attachNetwork(): Promise<void> {
    const [info, block] = [this.proc.stdio[3], this.proc.stdio[4]] as number[];
    const pid = await readJailPid(info as number);
    if (pid) this.pasta = await attachPasta(pid).catch(() => undefined);
    release(block as number);
  }

  private async readLoop(): Promise<void> {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      let newline = text.indexOf("\n");
      while (newline >= 0) {
        this.receive(text.slice(0, newline));
        text = text.slice(newline + 1);
        newline = text.indexOf("\n");
      }
      if (text.length > MAX_LINE_CHARS) {
        this.kill();
        return;
      }
    }
  }

  private receive(line: string): void {
    let m: { t?: unknown; id?: unknown; d?: unknown; code?: unknown };
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m === null || typeof m !== "object") return;
    if (m.t === "r") {
      this.markReady();
      return;
    }
    const id = m.id;
    if (typeof id !== "number") return;
    const bytes = () => (typeof m.d === "string" ? Buffer.from(m.d, "base64") : undefined);
    if (m.t === "out") {
      const data = bytes();
      if (data) this.execs.get(id)?.onData(data);
    } else if (m.t === "x") {
      const pending = this.execs.get(id);
      this.execs.delete(id);
      pending?.done(typeof m.code === "number" && Number.isInteger(m.code) ? m.code : null);
    } else if (m.t === "ok") this.connections.get(id)?.opened();
    else if (m.t === "d") {
      const data = bytes();
      if (data) this.connections.get(id)?.data(data);
    } else if (m.t === "e") {
      const peer = this.connections.get(id);
      this.connections.delete(id);
      peer?.closed();
    }
  }

  private send(message: object): void {
    if (!this.alive) return;
    const sink = this.proc.stdin as import("bun").FileSink;
    try {
      sink.write(`${JSON.stringify(message)}\n`);
      sink.flush();
    } catch {
      // The runner is gone; exited handles the rest.
    }
  }

  /** Runs `bash -c command` in the sandbox's working dir (pi's BashOperations contract). */
  async exec(command: string, options: SandboxExecOptions): Promise<{ exitCode: number | null }> {
    await this.ready;
    if (!this.alive) throw this.stoppedFor ?? new Error("The sandbox stopped while the command ran");
    const id = this.nextId++;
    // With a memory cgroup the kernel kills the hungry process, not the whole sandbox: a command that
    // dies while the sandbox's OOM count goes up used too much memory, and says so.
    const cgroups = this.jail.plan.cgroups;
    const oomBefore = cgroups ? oomKills(cgroups, this.pid) : 0;
    return new Promise((resolve, reject) => {
      const { signal, timeout } = options;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.execs.delete(id);
      };
      const stop = (error: Error) => {
        this.send({ t: "k", id });
        cleanup();
        reject(error);
      };
      const onAbort = () => stop(new Error("aborted"));
      this.execs.set(id, {
        onData: options.onData,
        done: (code) => {
          cleanup();
          if (code !== 0 && cgroups && oomKills(cgroups, this.pid) > oomBefore) reject(this.memoryError());
          else resolve({ exitCode: code });
        },
        failed: (error) => {
          cleanup();
          reject(error);
        },
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeout && timeout > 0)
        timer = setTimeout(() => stop(new Error(`timeout:${timeout}`)), timeout * 1000);
      this.send({ t: "x", id, c: command });
    });
  }

  /** Opens a connection to 127.0.0.1:port inside the jail; the peer hears of it. Returns its id. */
  connect(port: number, peer: ConnectionPeer): number {
    const id = this.nextId++;
    if (!this.alive) {
      queueMicrotask(() => peer.closed());
      return id;
    }
    this.connections.set(id, peer);
    this.send({ t: "o", id, p: port });
    return id;
  }

  write(id: number, bytes: Uint8Array): void {
    if (this.connections.has(id)) this.send({ t: "d", id, d: Buffer.from(bytes).toString("base64") });
  }

  end(id: number): void {
    if (this.connections.delete(id)) this.send({ t: "e", id });
  }

  kill(): void {
    this.proc.kill("SIGKILL");
  }

  /**
   * Stops every process of the sandbox and waits until they are gone: the jail's pid namespace ends
   * with its init, which dies with the outer process, but the kernel reaps the rest a moment later.
   */
  async stop(): Promise<void> {
    const tree = processTree(this.proc.pid);
    this.kill();
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    await this.exited;
    for (let waited = 0; waited < 5000 && tree.some(alive); waited += 10) await Bun.sleep(10);
  }
}

/** Whether a process still exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}
