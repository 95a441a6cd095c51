/**
 * The pi SDK (`@mariozechner/pi-coding-agent`), loaded on first use. Evaluating it costs about 900 ms and
 * 60 MiB, so nothing on the startup path imports it as a value: the places that build pi objects await
 * `loadPi()` (type-only imports are erased and stay free). The chat family's start hook begins the load
 * without awaiting it, so the first chat request usually finds it warm, else awaits the same promise.
 * A dynamic import of a string literal is still bundled by `bun build --compile`.
 */
// pi's file locks (proper-lockfile) register signal-exit's SIGINT/SIGTERM handlers as they load. Loaded
// after run.ts's one-shot handlers, signal-exit would find itself the last listener and re-raise the
// signal, so the server died instead of stopping cleanly. Loading it here, before those handlers, keeps
// the order pi's eager import used to give (about 10 ms, not 900).
import "proper-lockfile";

export type PiSdk = typeof import("@mariozechner/pi-coding-agent");

let loading: Promise<PiSdk> | undefined;

export function loadPi(): Promise<PiSdk> {
  loading ??= import("@mariozechner/pi-coding-agent");
  return loading;
}
