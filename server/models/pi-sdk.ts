/**
 * The pi SDK (`@mariozechner/pi-coding-agent`), loaded on first use. Evaluating it costs about 900 ms and
 * 60 MiB, so nothing on the startup path imports it as a value: the places that build pi objects await
 * `loadPi()` (type-only imports are erased and stay free); the first chat request pays the load once.
 * No background warm-up: evaluating pi blocks the event loop for its whole duration, which would stall
 * requests (and a shutdown's drain) that happen to arrive meanwhile.
 * A dynamic import of a string literal is still bundled by `bun build --compile`.
 */
export type PiSdk = typeof import("@mariozechner/pi-coding-agent");

/** typebox 1.x: pi's tool API types a tool's parameters with it (pi's own packages import it too). */
export type PiTypeBox = typeof import("typebox");

let loading: Promise<PiSdk> | undefined;
let typebox: PiTypeBox | undefined;

/** Loads pi and, with it, typebox 1.x (~150 ms of CPU of its own: it stays off the startup path too). */
export function loadPi(): Promise<PiSdk> {
  loading ??= Promise.all([import("@mariozechner/pi-coding-agent"), import("typebox")]).then(([pi, tb]) => {
    typebox = tb;
    return pi;
  });
  return loading;
}

/** typebox 1.x for a pi tool's parameters; a tool is built after `await loadPi()` (its session needs pi). */
export function piTypeBox(): PiTypeBox {
  if (!typebox) throw new Error("typebox loads with pi: await loadPi() before building a pi tool");
  return typebox;
}
