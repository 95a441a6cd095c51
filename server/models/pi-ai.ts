/**
 * pi-ai (`@mariozechner/pi-ai`: the model registry, the catalog and the providers' streaming), loaded
 * when a model is first needed. Evaluating it costs a few hundred milliseconds of CPU, which a server
 * start would otherwise pay before /health/ready answers; so nothing on the startup path imports it as
 * a value (type-only imports are erased and stay free). ModelService awaits `loadPiAi()` in every method
 * that needs the registry (resolve, list, defaultModel, complete); the loaded module is then at hand
 * synchronously through `piAi()` for the ones that must stay synchronous (stream, on a model a resolve
 * returned). tests/foundation/lazy-start.test.ts fails if a static import comes back.
 * On first load the offline model and the Bedrock wrapper are registered with pi-ai's registry.
 * A dynamic import of a string literal is still bundled by `bun build --compile`.
 */
import { installBedrockCredentials } from "./bedrock.ts";
import { registerOfflineProvider } from "./offline.ts";

export type PiAi = typeof import("@mariozechner/pi-ai");

let loading: Promise<PiAi> | undefined;
let loaded: PiAi | undefined;

export function loadPiAi(): Promise<PiAi> {
  loading ??= import("@mariozechner/pi-ai").then((pi) => {
    registerOfflineProvider(pi);
    installBedrockCredentials(pi);
    loaded = pi;
    return pi;
  });
  return loading;
}

/** The loaded module; throws when nothing has loaded it yet (a model comes from an awaited resolve). */
export function piAi(): PiAi {
  if (!loaded) throw new Error("pi-ai is not loaded yet: resolve the model (ModelService.resolve) first");
  return loaded;
}
