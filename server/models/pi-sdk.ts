/**
 * The pi SDK (`@mariozechner/pi-coding-agent`), loaded on first use. Evaluating it costs about 900 ms and
 * 60 MiB, so nothing on the startup path imports it as a value: the places that build pi objects await
 * `loadPi()` (type-only imports are erased and stay free); the first chat request pays the load once.
 * No background warm-up: evaluating pi blocks the event loop for its whole duration, which would stall
 * requests (and a shutdown's drain) that happen to arrive meanwhile.
 * A dynamic import of a string literal is still bundled by `bun build --compile`.
 */
export type PiSdk = typeof import("@mariozechner/pi-coding-agent");

let loading: Promise<PiSdk> | undefined;

export function loadPi(): Promise<PiSdk> {
  loading ??= import("@mariozechner/pi-coding-agent");
  return loading;
}
