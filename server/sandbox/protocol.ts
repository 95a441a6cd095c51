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
  | { type: "ready"; python: string; snapshot?: boolean }
  | { type: "initialized" }
  | { type: "tool_call"; callId: number; name: string; args: unknown[] }
  /** What step `id` printed so far that was not sent yet, while it runs (the result still has it all). */
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "result"; id: number; result: StepResult };

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
