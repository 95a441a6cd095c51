/**
 * Reading a document (PDF, HTML) off the server's event loop: each document in a `parse` subprocess of
 * its own (parse-worker.ts; the server spawns itself with that subcommand, so the compiled binary works
 * too), with an empty environment, under bubblewrap where it works (the jail of server/sandbox: no
 * network, no data dir, every capability dropped, seccomp), at a lower CPU priority, and bounded:
 *
 * - time: a wall-clock limit per document, then a hard kill (CPU-time rlimit behind it);
 * - memory: the sandbox's memory cgroup, else its watchdog, at the limit below;
 * - output: at most the text cap (plus a little), read as it comes; more and the process is killed;
 * - pages and extracted text: checked inside the process as it reads (file-text.ts).
 *
 * A document past a limit fails alone, with a reason the index summary lists; a few run at once
 * server-wide, the rest wait their turn, owner by owner in rotation. The values come from the policy's
 * `[search]` table.
 *
 * Started by root, each parse runs as a host uid of its own (a document reader slot of uids.ts), never
 * `nobody`: a host daemon running as nobody could otherwise read the document out of its memory or
 * signal it, and would share its process limit.
 */
import { realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { PolicySettings } from "../../config/policy-schema.ts";
import { type Confinement, confinementFor } from "../../sandbox/confinement.ts";
import {
  detectIsolation,
  detectSandbox,
  detectSandboxInBackground,
  type Isolation,
  RUNTIME_LIBRARIES,
  runtimeBinds,
  sourceRoot,
} from "../../sandbox/isolation.ts";
import { jailArgs } from "../../sandbox/jail.ts";
import { DEFAULT_LIMITS, prlimitOptions, type SandboxLimits } from "../../sandbox/limits.ts";
import { assertUidRange, DEFAULT_UID_BASE, PARSER_UIDS, parserUid } from "../../sandbox/uids.ts";
import type { ReadCaps } from "./file-text.ts";
import { REFUSED_EXIT } from "./parse-worker.ts";

const MIB = 1024 * 1024;

export interface ParseLimits extends ReadCaps {
  /** Wall clock per document (ms). */
  timeoutMs: number;
  /** Real memory of one parse process (bytes). */
  memoryBytes: number;
  /** Parse processes alive at once, server-wide. */
  parallel: number;
}

/** The committed policy's values (`[defaults.search]`), also used when a policy leaves them out. */
export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  timeoutMs: 30_000,
  memoryBytes: 512 * MIB,
  maxPages: 2000,
  maxTextBytes: 10 * MIB,
  parallel: 2,
};

export function parseLimitsFromPolicy(settings: PolicySettings): ParseLimits {
  const s = settings.search;
  const d = DEFAULT_PARSE_LIMITS;
  return {
    timeoutMs: (s?.read_timeout_seconds ?? d.timeoutMs / 1000) * 1000,
    memoryBytes: (s?.read_memory_mb ?? d.memoryBytes / MIB) * MIB,
    maxPages: s?.read_max_pages ?? d.maxPages,
    maxTextBytes: (s?.read_max_text_mb ?? d.maxTextBytes / MIB) * MIB,
    parallel: s?.read_parallel ?? d.parallel,
  };
}

export type ParseResult = { text: string } | { reason: string };
export type ParseKind = "pdf" | "html";

export interface ParserOptions {
  /** Paths never visible inside the jail (the data dir). */
  keepOut?: string[];
  /** Forced isolation (tests of the unjailed path); default: what this host offers. */
  isolation?: Isolation;
  /** Replaces the whole command line (tests of the limits with a stand-in process). */
  command?: (kind: ParseKind) => string[];
  /** Policy `sandbox.uid_base`: where the readers' uids are (a root server). */
  uidBase?: number;
}

/** Bytes of stdout beyond the text cap a reason or framing may take. */
const OUTPUT_SLACK = 64 * 1024;

export class DocumentParser {
  readonly limits: ParseLimits;
  /** Decided with the first parse, not when the server composes (docs/benchmarks.md, "Cold start"). */
  private decided?: { isolation: Isolation; confinement: Confinement };
  private readonly sandbox: SandboxLimits;
  private readonly keepOut: string[];
  private readonly live = new Set<Subprocess>();
  /** Waiting parses per owner; the Map's order is the round-robin order of the owners. */
  private readonly waiting = new Map<string, (() => void)[]>();
  private running = 0;
  /** uid slots of live parse processes, and the next slot to try (handed out in turn). */
  private readonly slotsInUse = new Set<number>();
  private nextSlot = 0;

  constructor(
    limits: ParseLimits,
    private readonly options: ParserOptions = {},
  ) {
    this.limits = { ...limits, parallel: Math.max(1, limits.parallel) };
    this.keepOut = (options.keepOut ?? []).map((p) => resolve(p));
    const seconds = Math.ceil(limits.timeoutMs / 1000);
    this.sandbox = {
      ...DEFAULT_LIMITS,
      memoryBytes: limits.memoryBytes,
      cpuSeconds: seconds + 5,
      processes: 64,
      fileSizeBytes: MIB,
      openFiles: 256,
      scratchBytes: 16 * MIB,
    };
  }

  /**
   * How parses run here. The jail probes main.ts started may still be running while the server composes:
   * deciding then would run them again, synchronously, on the start path. The first parse awaits them.
   */
  private async decide(): Promise<{ isolation: Isolation; confinement: Confinement }> {
    if (!this.decided) {
      if (!this.options.isolation) await detectSandboxInBackground();
      const isolation = this.options.isolation ?? detectIsolation();
      this.decided ??= { isolation, confinement: confinementFor(isolation, this.sandbox) };
    }
    return this.decided;
  }

  /**
   * The document's text, or why it has none; never throws for what the document holds. `owner` is
   * whose document it is: waiting parses are served one owner at a time in turn, so one owner's
   * 200-file upload cannot keep another's document waiting behind all of it.
   */
  async parse(kind: ParseKind, bytes: Uint8Array, owner = ""): Promise<ParseResult> {
    await this.slot(owner);
    try {
      return await this.run(kind, bytes);
    } finally {
      this.release();
    }
  }

  /** This parser for one owner's documents (what the search family hands its readers). */
  for(owner: string): Pick<DocumentParser, "parse"> {
    return { parse: (kind, bytes) => this.parse(kind, bytes, owner) };
  }

  /** Stops every parse in progress (the server is shutting down). */
  close(): void {
    for (const proc of this.live) proc.kill("SIGKILL");
    this.decided?.confinement.close();
  }

  private async slot(owner: string): Promise<void> {
    if (this.running < this.limits.parallel) {
      this.running++;
      return;
    }
    // The slot is handed over by release(), which leaves `running` as it is.
    await new Promise<void>((wake) => {
      const queue = this.waiting.get(owner) ?? [];
      queue.push(wake);
      this.waiting.set(owner, queue);
    });
  }

  /** Hands the slot to the first owner in turn, who then goes to the back of the line. */
  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running--;
      return;
    }
    const [owner, queue] = next.value;
    const wake = queue.shift() as () => void;
    this.waiting.delete(owner);
    if (queue.length > 0) this.waiting.set(owner, queue);
    wake();
  }

  private async run(kind: ParseKind, bytes: Uint8Array): Promise<ParseResult> {
    const { limits } = this;
    const { isolation, confinement } = await this.decide();
    const slot = this.freeSlot();
    this.slotsInUse.add(slot);
    const proc = Bun.spawn(this.options.command?.(kind) ?? this.command(isolation, kind, slot), {
      env: {},
      stdin: new Blob([bytes as Uint8Array<ArrayBuffer>]),
      stdout: "pipe",
      stderr: "ignore",
    });
    this.live.add(proc);
    // Free again only once the process is gone, whatever happens to its output.
    void proc.exited.finally(() => this.slotsInUse.delete(slot));
    let killedFor: "time" | "output" | undefined;
    const kill = (why: typeof killedFor) => {
      killedFor ??= why;
      proc.kill("SIGKILL");
    };
    confinement.watch(proc.pid, () => proc.kill("SIGKILL"));
    const timer = setTimeout(() => kill("time"), limits.timeoutMs);
    try {
      const output = await boundedRead(proc.stdout, limits.maxTextBytes + OUTPUT_SLACK);
      if (output === undefined) kill("output");
      const code = await proc.exited;
      const memory = confinement.exited(proc.pid) === "memory";
      if (killedFor === "time" || proc.signalCode === "SIGXCPU")
        return {
          reason: `reading it took longer than ${limits.timeoutMs / 1000} s (search.read_timeout_seconds)`,
        };
      if (memory)
        return {
          reason: `reading it needed more than ${limits.memoryBytes / MIB} MiB of memory (search.read_memory_mb)`,
        };
      if (killedFor === "output" || output === undefined)
        return { reason: `the reader wrote more than ${limits.maxTextBytes / MIB} MiB of text` };
      const text = new TextDecoder("utf-8", { fatal: false }).decode(output);
      if (code === 0) return { text };
      if (code === REFUSED_EXIT) return { reason: oneLine(text) || `unreadable ${kind.toUpperCase()}` };
      return { reason: `the reader stopped unexpectedly (${proc.signalCode ?? `exit code ${code}`})` };
    } finally {
      clearTimeout(timer);
      this.live.delete(proc);
    }
  }

  /** The next reader uid slot no live parse holds, in turn from the last one handed out. */
  private freeSlot(): number {
    for (let tried = 0; tried < PARSER_UIDS; tried++) {
      const slot = this.nextSlot;
      this.nextSlot = (this.nextSlot + 1) % PARSER_UIDS;
      if (!this.slotsInUse.has(slot)) return slot;
    }
    // Unreachable: at most 64 parses run at once (policy search.read_parallel), one slot each.
    throw new Error("no document reader uid is free");
  }

  /** `atrium parse <kind> …`, jailed where bubblewrap works, at a lower CPU priority. */
  private command(isolation: Isolation, kind: ParseKind, slot: number): string[] {
    const exe = realpathSync(process.execPath);
    const root = sourceRoot();
    const inner = [
      ...(root ? [exe, join(root, "server", "main.ts")] : [exe]),
      "parse",
      kind,
      `--max-pages=${this.limits.maxPages}`,
      `--max-text-bytes=${this.limits.maxTextBytes}`,
    ];
    const nice = Bun.which("nice");
    const lower = nice ? [nice, "-n", "10"] : [];
    const plan = isolation === "bubblewrap" ? detectSandbox().plan : undefined;
    if (plan) {
      const base = this.options.uidBase ?? DEFAULT_UID_BASE;
      if (plan.dropTo) assertUidRange(base);
      const jailed = jailArgs(plan, this.sandbox, {
        ...(plan.dropTo ? { uid: parserUid(base, slot) } : {}),
        system: RUNTIME_LIBRARIES,
        readOnly: runtimeBinds(this.keepOut),
        tmpfs: ["/tmp"],
        chdir: "/tmp",
        command: inner,
      });
      return [...lower, ...jailed];
    }
    // No jail here: the same process, empty environment, with the rlimits where prlimit exists.
    const prlimit = process.platform === "linux" ? Bun.which("prlimit") : null;
    const rlimits = prlimit ? [prlimit, ...prlimitOptions(this.sandbox, false), "--"] : [];
    return [...lower, ...rlimits, ...inner];
  }
}

/** Everything the stream gives, or undefined once it passes `max` bytes (the rest is not read). */
async function boundedRead(stream: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A reason as one short line of printable text (it comes from the subprocess). */
function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\s]+/gu, " ")
    .trim()
    .slice(0, 300);
}
