/**
 * The desktop app's build steps (electron and electron-builder live in desktop/package.json, installed on
 * first use, never by the root install):
 *
 *   bun scripts/desktop.ts dev    `npm run desktop`: bundle main + preload, run Electron on the checkout
 *                                 (the shell starts `bun server/main.ts`)
 *   bun scripts/desktop.ts dist   `npm run dist`: the server binary for this platform, main + preload,
 *                                 then electron-builder's installers for this platform in dist/desktop/
 *
 * electron-builder runs from the repository root with its top-level electron-builder.yml
 * (`directories.app: desktop`). It looks for Electron in the project's own node_modules, which the root
 * install never fills, so the version installed in desktop/ is passed to it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildServerBinary, REPO_ROOT } from "./build.ts";
import { buildWeb } from "./build-web.ts";

export const DESKTOP_DIR = join(REPO_ROOT, "desktop");

/** Bundles the main process and the preload to CommonJS (a sandboxed preload cannot be an ES module). */
export async function buildShell(outdir = join(DESKTOP_DIR, "dist")): Promise<string[]> {
  const result = await Bun.build({
    entrypoints: [join(DESKTOP_DIR, "main.ts"), join(DESKTOP_DIR, "preload.ts")],
    outdir,
    target: "node",
    format: "cjs",
    external: ["electron"],
    naming: "[name].cjs",
  });
  if (!result.success) throw new Error(`shell build failed: ${result.logs.map(String).join("; ")}`);
  return result.outputs.map((output) => output.path);
}

/** Where `npm run dist` puts the server binary; electron-builder.yml reads it from there. */
export function serverBinaryPath(platform: string = process.platform, arch: string = process.arch): string {
  return join(
    REPO_ROOT,
    "dist",
    "server",
    `${platform}-${arch}`,
    platform === "win32" ? "atrium.exe" : "atrium",
  );
}

/** desktop/'s electron-builder over the top-level config, for this platform's installers. */
async function electronBuilder(): Promise<void> {
  const bin = join(DESKTOP_DIR, "node_modules", ".bin", "electron-builder");
  const electron = JSON.parse(
    readFileSync(join(DESKTOP_DIR, "node_modules", "electron", "package.json"), "utf8"),
  );
  const args = ["--projectDir", REPO_ROOT, "--config", join(REPO_ROOT, "electron-builder.yml")];
  args.push(`-c.electronVersion=${electron.version}`, "--publish", "never");
  const proc = Bun.spawn([bin, ...args], { cwd: REPO_ROOT, stdio: ["inherit", "inherit", "inherit"] });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`electron-builder exited with ${code}`);
}

async function npm(args: string[]): Promise<void> {
  const command = process.platform === "win32" ? "npm.cmd" : "npm";
  const proc = Bun.spawn([command, ...args], { cwd: DESKTOP_DIR, stdio: ["inherit", "inherit", "inherit"] });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`npm ${args.join(" ")} (in desktop/) exited with ${code}`);
}

/** Installs desktop/'s own dependencies (Electron downloads its binary here) unless present. */
async function ensureDesktopDependencies(): Promise<void> {
  if (existsSync(join(DESKTOP_DIR, "node_modules", "electron", "package.json"))) return;
  process.stdout.write(
    "Installing the desktop app's dependencies (Electron, electron-builder) in desktop/ ...\n",
  );
  await npm(["install", "--no-audit", "--no-fund"]);
}

async function main(command: string | undefined): Promise<number> {
  if (command === "dev") {
    // The shell runs `bun server/main.ts` from the checkout, which serves build/web/.
    await buildWeb();
    await buildShell();
    await ensureDesktopDependencies();
    await npm(["run", "start"]);
    return 0;
  }
  if (command === "dist") {
    const binary = await buildServerBinary({ outfile: serverBinaryPath() });
    process.stdout.write(`built ${binary}\n`);
    await buildShell();
    await ensureDesktopDependencies();
    await electronBuilder();
    process.stdout.write(`installers in ${join(REPO_ROOT, "dist", "desktop")}\n`);
    return 0;
  }
  process.stderr.write("usage: bun scripts/desktop.ts dev|dist\n");
  return 2;
}

if (import.meta.main) {
  main(process.argv[2]).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
