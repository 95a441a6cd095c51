/**
 * The JSON-lines protocol between the server and one sandbox subprocess (stdin: server → sandbox,
 * stdout: sandbox → server). One message per line. The sandbox is untrusted: the server validates every
 * message it reads and ignores lines that are not protocol messages.
 */

/** Server → sandbox. */
export type HostMessage =
  | { type: "init"; tools: string[]; vars: Record<string, string>; outputLimit: number }
  | { type: "run"; id: number; code: string }
  | { type: "tool_result"; callId: number; result?: unknown; error?: string };

/** Sandbox → server. */
export type SandboxMessage =
  /** `snapshot`: restored from the interpreters' memory snapshot (false: loaded from scratch). */
  | { type: "ready"; python: string; snapshot?: boolean; start?: StartReport }
  | { type: "initialized" }
  | { type: "tool_call"; callId: number; name: string; args: unknown[] }
  /** What step `id` printed so far that was not sent yet, while it runs (the result still has it all). */
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "result"; id: number; result: StepResult };

/**
 * How the sandbox says its start went (pyodide-start.ts): which of the faster paths it took, and when
 * each phase ended, in ms since its process started. Untrusted like every message: read only for
 * benchmarks and tests, never to decide anything.
 */
export interface StartReport {
  /** pyodide's runtime was compiled from the worker's start, beside the rest (false: by pyodide, after). */
  earlyCompile: boolean;
  /** pyodide's Emscripten module was loaded without Bun's transpiler (false: imported as usual). */
  untranspiled: boolean;
  /** The bulk steps applied to that module (emscripten-patches.ts): "table", "restore". */
  patched: string[];
  /** The worker's own code began (the process started, modules loaded). */
  workerMs: number;
  /** pyodide was loaded (restored from the snapshot, or from scratch). */
  loadedMs: number;
  /** The ready message was sent. */
  readyMs: number;
}

/** The sandbox's start report with only the fields and types defined, or undefined. */
export function startReportOf(value: unknown): StartReport | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const ms = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
  const [workerMs, loadedMs, readyMs] = [ms(r.workerMs), ms(r.loadedMs), ms(r.readyMs)];
  if (workerMs === undefined || loadedMs === undefined || readyMs === undefined) return undefined;
  return {
    earlyCompile: r.earlyCompile === true,
    untranspiled: r.untranspiled === true,
    patched: Array.isArray(r.patched) ? r.patched.filter((p) => p === "table" || p === "restore") : [],
    workerMs,
    loadedMs,
    readyMs,
  };
}

export interface StepResult {
  stdout: string;
  stderr: string;
  /** The formatted traceback when the code raised. */
  error: string | null;
  /** The value given to SUBMIT(...), when the code called it. */
  submitted: unknown;
  /** True when SUBMIT was called. */
  didSubmit: boolean;
  truncated: boolean;
}

export function parseSandboxLine(line: string): SandboxMessage | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown };
    if (typeof value !== "object" || value === null || typeof value.type !== "string") return undefined;
    return value as SandboxMessage;
  } catch {
    return undefined;
  }
}
