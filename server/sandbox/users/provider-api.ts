/**
 * The contract every per-user sandbox provider meets (the built-in local jail, a remote provider). The
 * chat runtime's tools and the sandbox routes talk only to this interface, never to a provider's
 * internals, so a team server can swap where users' code runs without touching the chat family.
 *
 * Paths the model sees are the sandbox's own: `home` is the sandbox user's home and `workspace`
 * (`<home>/agent-workspace`) the folder that persists across restarts and is the commands' working dir.
 */
import type { SandboxRecord, SandboxRegistry } from "./registry.ts";

export type Availability = { available: true } | { available: false; reason: string };

/** The contract of pi's BashOperations.exec: output streamed, rejections `aborted` / `timeout:<s>`. */
export interface SandboxExecOptions {
  onData: (data: Buffer) => void;
  signal?: AbortSignal;
  /** Seconds; none or 0 means no limit beyond the provider's own. */
  timeout?: number;
}

/** Where a preview request is forwarded: an HTTP base URL, optionally over a Unix socket, with headers. */
export interface PreviewUpstream {
  /** Base URL without a trailing slash; the proxied path and query are appended to it. */
  url: string;
  /** Headers the upstream needs (a remote provider's preview token); never the caller's credentials. */
  headers?: Record<string, string>;
  /** A Unix socket path to connect through (Bun's `fetch(url, { unix })`) instead of TCP. */
  unix?: string;
}

/** A long-lived process in a sandbox, its stdin written and its stdout read by the host. */
export interface SandboxProcess {
  write(bytes: Uint8Array): void;
  /** Closes its stdin (a stdio server exits on end of input). */
  closeInput(): void;
  /** Kills its process group. */
  kill(): void;
  /** Its exit code (127: the command is not installed), or null when the sandbox stopped. */
  exited: Promise<number | null>;
}

export interface SandboxProvider {
  /** `local`, `remote`, … — stored in the registry beside the sandbox id. */
  readonly name: string;
  readonly registry: SandboxRegistry;
  /** The sandbox user's home inside the sandbox (e.g. `/home/atrium`). */
  readonly home: string;
  /** `<home>/agent-workspace`: the persistent folder and the commands' working directory. */
  readonly workspace: string;
  /** Whether this server can give users sandboxes at all (a reason when not). */
  availability(owner?: string): Availability;
  /** The owner's sandbox, created or started when it is not running; recorded in the registry. */
  ensure(owner: string): Promise<SandboxRecord>;
  /** The owner's sandbox when it exists and is running. */
  active(owner: string): Promise<SandboxRecord | undefined>;
  /** Runs a shell command in the owner's sandbox (started first when needed), in `workspace`. */
  exec(owner: string, command: string, options: SandboxExecOptions): Promise<{ exitCode: number | null }>;
  /**
   * Starts a long-lived command in the owner's sandbox with its stdin and stdout piped to the host (an
   * MCP stdio server); absent where the provider cannot (a remote provider).
   */
  open?(owner: string, command: string, onData: (data: Buffer) => void): Promise<SandboxProcess>;
  /** Where a preview of `port` inside the owner's running sandbox is served from; undefined when none. */
  preview(owner: string, port: number): Promise<PreviewUpstream | undefined>;
  /** Stops the owner's sandbox (its processes end; the workspace stays). */
  stop(owner: string): Promise<void>;
  /** Stops every sandbox this process started (server shutdown). */
  close(): Promise<void>;
}
