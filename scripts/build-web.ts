/**
 * Builds the UI ahead of time (`npm start`, `npm test` and `npm run build` run it first): web/main.tsx
 * bundled by Bun for the browser, minified, with content-hashed names (CSS included), the tiny theme
 * script web/theme-boot.js copied beside them (hashed too), and index.html written to point at them. The output folder, build/web/ (gitignored), is what server/web.ts serves
 * from source; scripts/build.ts builds into a scratch folder and embeds it in the binary.
 *
 *   bun scripts/build-web.ts [--outdir build/web]
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "..");
export const WEB_ENTRY = join(ROOT, "web", "main.tsx");
export const WEB_TEMPLATE = join(ROOT, "web", "index.html");
/** The blocking theme script <head> loads before the first paint (copied as is, with its hash in the name). */
export const THEME_BOOT = join(ROOT, "web", "theme-boot.js");
export const WEB_BUILD_DIR = join(ROOT, "build", "web");

export interface WebBuild {
  outdir: string;
  /** Paths relative to outdir: `index.html` and `assets/<name>-<hash>.<ext>`. */
  files: string[];
  script: string;
  style: string;
  /** The theme script <head> runs before the first paint. */
  theme: string;
}

/**
 * Bundles into a sibling temp folder, then swaps it in with a rename, so a server or a test reading
 * outdir never sees half a build (two builds at once: the last rename wins, both complete).
 */
export async function buildWeb(outdir = WEB_BUILD_DIR): Promise<WebBuild> {
  const staging = `${outdir}.tmp-${process.pid}-${Date.now()}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await Bun.build({
    entrypoints: [WEB_ENTRY],
    outdir: join(staging, "assets"),
    target: "browser",
    minify: true,
    // A view's heavy library (the search graph's sigma) loads as its own chunk when the view needs it.
    splitting: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`web build failed: ${result.logs.map(String).join("; ")}`);
  }
  const boot = readFileSync(THEME_BOOT);
  const theme = `assets/theme-boot-${new Bun.CryptoHasher("sha256").update(boot).digest("hex").slice(0, 8)}.js`;
  writeFileSync(join(staging, theme), boot);
  const assets = [...result.outputs.map((o) => `assets/${basename(o.path)}`), theme];
  const entry = result.outputs.find((o) => o.kind === "entry-point");
  const script = entry ? `assets/${basename(entry.path)}` : undefined;
  const style = assets.find((a) => a.endsWith(".css"));
  if (!script || !style) throw new Error(`web build lacks a script or a stylesheet: ${assets.join(", ")}`);
  const html = readFileSync(WEB_TEMPLATE, "utf8")
    .replace("%SCRIPT%", `/app/${script}`)
    .replace("%STYLE%", `/app/${style}`)
    .replace("%THEME%", `/app/${theme}`);
  writeFileSync(join(staging, "index.html"), html);
  mkdirSync(dirname(outdir), { recursive: true });
  const old = `${outdir}.old-${process.pid}-${Date.now()}`;
  try {
    renameSync(outdir, old);
  } catch {
    // no previous build
  }
  renameSync(staging, outdir);
  rmSync(old, { recursive: true, force: true });
  return { outdir, files: ["index.html", ...assets], script, style, theme };
}

if (import.meta.main) {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { outdir: { type: "string" } } });
  const started = performance.now();
  const build = await buildWeb(resolve(values.outdir ?? WEB_BUILD_DIR));
  const ms = Math.round(performance.now() - started);
  process.stdout.write(
    `web UI built in ${relative(ROOT, build.outdir) || "."} (${build.files.length} files, ${ms} ms)\n`,
  );
}
