/**
 * How the sandbox worker (worker.ts) loads pyodide, inside the jail, in as little CPU and wall time as
 * the runtime allows. Most of a start from the snapshot is pyodide's own loading, measured per phase
 * (docs/benchmarks.md "Python interpreter start"); two of its pieces are done differently here:
 *
 * - pyodide's WebAssembly runtime (pyodide.asm.wasm, about 10 MB) starts compiling the moment the
 *   worker starts: JavaScriptCore validates it on a helper thread while this thread loads pyodide's
 *   JavaScript and reads the snapshot, instead of after them. pyodide is handed that module when it
 *   instantiates the same bytes.
 * - pyodide's Emscripten module (pyodide.asm.mjs, 1.25 MB of plain JavaScript) is loaded marked
 *   `// @bun`, which Bun takes as already transpiled, instead of running its TypeScript transpiler over
 *   it on every start (a jailed worker has no transpiler cache).
 *
 * - Two steps of that module are done in bulk (emscripten-patches.ts): its function table grows by a
 *   block rather than one slot per symbol the runtime links, and a snapshot's memory is copied over
 *   the fresh memory skipping the blocks that are zero in both.
 *
 * Each falls back to pyodide's ordinary path when something is not as expected. Nothing here reads
 * anything but pyodide's own files (the read-only folder the jail shows), and the load options are
 * LOAD_SHAPE's, as the snapshot's key says.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { loadPyodide } from "pyodide";
import { applyPatches, type PatchName } from "./emscripten-patches.ts";
import { LOAD_SHAPE } from "./load-shape.ts";

type Pyodide = Awaited<ReturnType<typeof loadPyodide>>;

/** What a start adds to the options: a snapshot to restore, or the making of one. */
export interface PyodideStartOptions {
  _loadSnapshot?: Uint8Array;
  _makeSnapshot?: boolean;
}

interface CompiledRuntime {
  bytes: Buffer;
  module: Promise<WebAssembly.Module>;
}

export class PyodideLoader {
  private readonly dir: string;
  private readonly runtime: CompiledRuntime | undefined;
  private factory: Promise<{ factory: unknown; patched: PatchName[] } | undefined> | undefined;
  /** Which of the faster paths the last load took (the ready message reports it). */
  readonly used = { earlyCompile: false, untranspiled: false, patched: [] as PatchName[] };

  /** Starts compiling the runtime at once (returns while it compiles). */
  constructor(indexURL: string) {
    this.dir = indexURL.replace(/\/+$/, "");
    this.runtime = compileRuntime(`${this.dir}/pyodide.asm.wasm`);
  }

  /** pyodide loaded with LOAD_SHAPE and `options`. */
  async load(options: PyodideStartOptions): Promise<Pyodide> {
    this.factory ??= emscriptenModule(`${this.dir}/pyodide.asm.mjs`);
    const loaded = await this.factory;
    const factory = loaded?.factory;
    this.used.untranspiled = loaded !== undefined;
    this.used.patched = loaded?.patched ?? [];
    this.used.earlyCompile = false;
    const handed = () => {
      this.used.earlyCompile = true;
    };
    return withRuntime(this.runtime, handed, () =>
      loadPyodide({
        ...(factory ? { createPyodideModule: factory } : {}),
        ...loadOptions(this.dir),
        ...options,
      } as Parameters<typeof loadPyodide>[0]),
    );
  }
}

/** pyodide's options: LOAD_SHAPE (what the snapshot's key names), and nothing of this process. */
function loadOptions(dir: string) {
  return {
    indexURL: `${dir}/`,
    // An empty object, so `import js` reaches nothing of this process.
    jsglobals: {},
    _sysExecutable: LOAD_SHAPE.sysExecutable,
    // Emscripten otherwise puts this script's host path in the `_` variable: left out (a value set to
    // undefined is dropped).
    env: { ...LOAD_SHAPE.env, _: undefined } as unknown as Record<string, string>,
    packages: LOAD_SHAPE.packages,
    stdout: () => {},
    stderr: () => {},
  };
}

function compileRuntime(path: string): CompiledRuntime | undefined {
  try {
    const bytes = readFileSync(path);
    const module = WebAssembly.compile(bytes);
    // pyodide's own instantiation reports a failure; this one must not end the process first.
    module.catch(() => {});
    return { bytes, module };
  } catch {
    return undefined;
  }
}

/**
 * Runs `load` with WebAssembly.instantiate handing pyodide the module compiled early when what it
 * instantiates is that same runtime (the same bytes, compared; `handed` is told), and puts the original
 * back before `load`'s result is returned: before any code of a user runs. Anything else takes the
 * ordinary path.
 */
async function withRuntime<T>(
  runtime: CompiledRuntime | undefined,
  handed: () => void,
  load: () => Promise<T>,
): Promise<T> {
  if (!runtime) return load();
  const saved = WebAssembly.instantiate;
  const original = saved.bind(WebAssembly) as (s: unknown, i?: WebAssembly.Imports) => Promise<unknown>;
  const { bytes, module } = runtime;
  WebAssembly.instantiate = (async (source: unknown, imports?: WebAssembly.Imports) => {
    const same = ArrayBuffer.isView(source) && sameBytes(bytes, source);
    const compiled = same ? await module.catch(() => undefined) : undefined;
    if (!compiled) return original(source, imports);
    handed();
    return { module: compiled, instance: await original(compiled, imports) };
  }) as typeof WebAssembly.instantiate;
  try {
    return await load();
  } finally {
    WebAssembly.instantiate = saved;
  }
}

/**
 * Whether `source` holds the runtime's bytes. The runtime is pyodide's own read-only file, read before
 * any user code runs; the only other modules instantiated are pyodide's side modules, of other sizes. So
 * the size and 64 slices spread over the file are compared (a whole compare of 10 MB took 10-30 ms).
 */
function sameBytes(bytes: Buffer, source: ArrayBufferView): boolean {
  if (source.byteLength !== bytes.byteLength) return false;
  const view = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  const slice = 4096;
  const step = Math.max(slice, Math.floor(bytes.byteLength / 64));
  for (let at = 0; at < bytes.byteLength; at += step) {
    const end = Math.min(at + slice, bytes.byteLength);
    if (!bytes.subarray(at, end).equals(view.subarray(at, end))) return false;
  }
  const tail = Math.max(0, bytes.byteLength - slice);
  return bytes.subarray(tail).equals(view.subarray(tail));
}

/**
 * The Emscripten module's factory, from its text marked `// @bun` with `import.meta.url` written in as
 * the file's own URL (all the module reads of `import.meta`) and the patches that match applied;
 * undefined when the text is not as expected or does not load, and pyodide then imports the file itself.
 */
async function emscriptenModule(
  path: string,
): Promise<{ factory: unknown; patched: PatchName[] } | undefined> {
  try {
    const source = readFileSync(path, "utf8");
    const meta = source.split("import.meta").length - 1;
    if (meta === 0 || meta !== source.split("import.meta.url").length - 1) return undefined;
    const patches = applyPatches(
      source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(path).href)),
    );
    const text = `// @bun\n${patches.text}`;
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    try {
      const factory = ((await import(url)) as { default?: unknown }).default;
      return typeof factory === "function" ? { factory, patched: patches.applied } : undefined;
    } finally {
      URL.revokeObjectURL(url);
    }
  } catch {
    return undefined;
  }
}
