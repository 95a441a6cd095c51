/**
 * `npm run build`: one executable with `bun build --compile` from server/main.ts. Everything the server
 * reads is reached through imports, so it is inside the binary: migrations and skills (text imports),
 * Swagger UI's assets and the built-in policy (file imports), and the web UI, built here first
 * (scripts/build-web.ts) and embedded as file imports swapped in for server/web-prebuilt.ts. Files the
 * server hands to something outside the bundle (pyodide's runtime for the sandbox subprocess, sqlite-vec's
 * extension for SQLite) are embedded the same way and written to the cache folder at first use. The
 * binary does not read .env or bunfig.toml by itself (the server reads the variables it names, as from source).
 * It carries JSC bytecode, so its start does not parse the bundle.
 *
 *   bun scripts/build.ts [--outfile dist/atrium] [--target bun-linux-x64]
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";
import { buildWeb, type WebBuild } from "./build-web.ts";

export const REPO_ROOT = resolve(import.meta.dir, "..");
const SERVER_ENTRY = join(REPO_ROOT, "server", "main.ts");
const PREBUILT_MODULE = /[\\/]server[\\/]web-prebuilt\.ts$/;
const PYODIDE_MODULE = /[\\/]server[\\/]sandbox[\\/]pyodide-embedded\.ts$/;
const PYODIDE_DIR = join(REPO_ROOT, "node_modules", "pyodide");
const SQLITE_VEC_MODULE = /[\\/]server[\\/]search[\\/]stores[\\/]sqlite-vec-embedded\.ts$/;
/** What pyodide loads from its folder at start (the sandbox imports its JS API from the bundle). */
const PYODIDE_FILES = ["pyodide-lock.json", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"];

export interface BuildOptions {
  outfile: string;
  /** A `bun build --target` for another platform (`bun-linux-arm64`, ...); default: this machine. */
  target?: Bun.Build.CompileTarget;
}

/** Builds the server executable; resolves with its path (Bun adds `.exe` for Windows targets). */
export async function buildServerBinary({ outfile, target }: BuildOptions): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), "atrium-build-"));
  try {
    const web = await buildWeb(join(scratch, "web"));
    const result = await Bun.build({
      entrypoints: [SERVER_ENTRY],
      compile: { outfile, ...(target ? { target } : {}), autoloadDotenv: false, autoloadBunfig: false },
      // JSC bytecode beside the bundle: the binary's start skips parsing its ~40 MB of JavaScript (CPU at
      // readiness 780 -> 300 ms measured, docs/benchmarks.md "Cold start"). ESM, as the sources are
      // (import.meta); bytecode is tied to the Bun inside the binary, which the build itself embeds.
      bytecode: true,
      format: "esm",
      plugins: [embedWebUi(web), embedPyodide(), embedSqliteVec(target)],
    });
    if (!result.success) throw new Error(`build failed: ${result.logs.map(String).join("; ")}`);
    const output = result.outputs[0];
    return output?.path ?? outfile;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Replaces server/web-prebuilt.ts with file imports of every built UI file (index.html, hashed assets). */
function embedWebUi(web: WebBuild): BunPlugin {
  const imports = web.files.map(
    (name, i) => `import w${i} from ${JSON.stringify(join(web.outdir, name))} with { type: "file" };`,
  );
  const entries = web.files.map((name, i) => `${JSON.stringify(name)}: w${i}`).join(", ");
  return {
    name: "atrium-embed-web-ui",
    setup(build) {
      build.onLoad({ filter: PREBUILT_MODULE }, () => ({
        loader: "ts",
        contents: `${imports.join("\n")}\nexport const PREBUILT_WEB: Record<string, string> | undefined = { ${entries} };\n`,
      }));
    },
  };
}

/** Replaces server/sandbox/pyodide-embedded.ts with file imports of pyodide's runtime files. */
function embedPyodide(): BunPlugin {
  const version = (JSON.parse(readFileSync(join(PYODIDE_DIR, "package.json"), "utf8")) as { version: string })
    .version;
  const imports = PYODIDE_FILES.map(
    (name, i) => `import f${i} from ${JSON.stringify(join(PYODIDE_DIR, name))} with { type: "file" };`,
  );
  const files = PYODIDE_FILES.map((name, i) => `${JSON.stringify(name)}: f${i}`).join(", ");
  return {
    name: "atrium-embed-pyodide",
    setup(build) {
      build.onLoad({ filter: PYODIDE_MODULE }, () => ({
        loader: "ts",
        contents: `${imports.join("\n")}\nexport const EMBEDDED_PYODIDE = { version: ${JSON.stringify(version)}, files: { ${files} } };\n`,
      }));
    },
  };
}

/**
 * The sqlite-vec build for the target (`bun-linux-x64`, `bun-darwin-arm64`, ...; default: this machine):
 * the platform package npm installed beside `sqlite-vec`. npm installs only this machine's, so a
 * cross-build may find none: the binary then says search stays on BM25, as where loading fails.
 */
export function sqliteVecFile(target?: string): { version: string; path: string; name: string } | undefined {
  const [os, arch] = target
    ? (/^bun-(linux|darwin|windows)-(x64|arm64)/.exec(target)?.slice(1) ?? [])
    : [process.platform === "win32" ? "windows" : process.platform, process.arch];
  if (!os || !arch) return undefined;
  const dir = join(REPO_ROOT, "node_modules", `sqlite-vec-${os}-${arch}`);
  const name = `vec0.${os === "windows" ? "dll" : os === "darwin" ? "dylib" : "so"}`;
  if (!existsSync(join(dir, name))) return undefined;
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  return { version, path: join(dir, name), name };
}

/** Replaces server/search/stores/sqlite-vec-embedded.ts with a file import of the target's extension. */
function embedSqliteVec(target?: string): BunPlugin {
  const file = sqliteVecFile(target);
  if (!file)
    return swapModule(
      "atrium-embed-sqlite-vec",
      SQLITE_VEC_MODULE,
      "export const EMBEDDED_SQLITE_VEC = undefined;\n",
    );
  const sha256 = createHash("sha256").update(readFileSync(file.path)).digest("hex");
  const fields = `version: ${JSON.stringify(file.version)}, name: ${JSON.stringify(file.name)}, sha256: "${sha256}"`;
  return swapModule(
    "atrium-embed-sqlite-vec",
    SQLITE_VEC_MODULE,
    `import path from ${JSON.stringify(file.path)} with { type: "file" };\nexport const EMBEDDED_SQLITE_VEC = { ${fields}, path };\n`,
  );
}

/** A plugin that replaces the module matching `filter` with `contents`. */
function swapModule(name: string, filter: RegExp, contents: string): BunPlugin {
  return {
    name,
    setup(build) {
      build.onLoad({ filter }, () => ({ loader: "ts", contents }));
    },
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { outfile: { type: "string" }, target: { type: "string" } },
  });
  const outfile = resolve(values.outfile ?? join(REPO_ROOT, "dist", "atrium"));
  const path = await buildServerBinary({ outfile, target: values.target as Bun.Build.CompileTarget });
  process.stdout.write(`built ${path}\n`);
}
