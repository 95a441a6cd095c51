/**
 * Desktop packaging that cannot run here (electron-builder needs Electron's download) is checked for
 * consistency instead: electron-builder.yml puts each platform's server binary where the shell looks for
 * it, the shell bundles to the files it lists, the preload needs nothing but Electron, and the app's
 * package.json agrees with the root one.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { serverCommand } from "../../desktop/supervisor.ts";
import { buildShell, DESKTOP_DIR, serverBinaryPath } from "../../scripts/desktop.ts";
import { iconPng } from "../../scripts/icon.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
/** electron-builder's file macro for the architecture being packaged. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the macro is literal text in electron-builder.yml
const ARCH_MACRO = "${arch}";
afterAll(() => dir.remove());

const rootPkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
const desktopPkg = JSON.parse(readFileSync(join(DESKTOP_DIR, "package.json"), "utf8"));
const builder = Bun.YAML.parse(readFileSync(join(REPO_ROOT, "electron-builder.yml"), "utf8")) as Record<
  string,
  // biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document
  any
>;

test("the desktop app's package.json: its own Electron tooling, the root's version, the bundled main", () => {
  expect(Object.keys(desktopPkg.devDependencies)).toEqual(
    expect.arrayContaining(["electron", "electron-builder"]),
  );
  expect(desktopPkg.version).toBe(rootPkg.version);
  expect(desktopPkg.productName).toBe("Atrium");
  expect(desktopPkg.main).toBe("dist/main.cjs");
  // electron-builder's deb target needs a maintainer address.
  expect(desktopPkg.author.email).toContain("@");
  expect(rootPkg.scripts).toMatchObject({
    build: "bun scripts/build.ts",
    desktop: "bun scripts/desktop.ts dev",
    dist: "bun scripts/desktop.ts dist",
  });
});

test("electron-builder.yml (repository root): the app in desktop/, app id, name, asar, the installers, the icon", () => {
  expect(builder).toMatchObject({ appId: "dev.atrium.desktop", productName: "Atrium", asar: true });
  // Paths in the file are relative to the repository root; `files` to the app directory.
  expect(resolve(REPO_ROOT, builder.directories.app)).toBe(DESKTOP_DIR);
  expect(resolve(REPO_ROOT, builder.directories.output)).toBe(join(REPO_ROOT, "dist", "desktop"));
  expect(resolve(REPO_ROOT, builder.directories.buildResources)).toBe(join(DESKTOP_DIR, "build"));
  expect(builder.linux.target).toEqual(["AppImage", "deb"]);
  expect(builder.mac.target).toBe("dmg");
  expect(builder.win.target).toBe("nsis");
  for (const platform of ["linux", "mac", "win"]) {
    const icon = readFileSync(join(REPO_ROOT, builder[platform].icon));
    // A PNG of 512×512, the size electron-builder converts for every platform.
    expect(icon.subarray(1, 4).toString()).toBe("PNG");
    expect([icon.readUInt32BE(16), icon.readUInt32BE(20)]).toEqual([512, 512]);
  }
  // The committed icon is the one scripts/icon.ts draws.
  expect(Buffer.compare(readFileSync(join(DESKTOP_DIR, "build", "icon.png")), iconPng())).toBe(0);
});

test("each platform's server binary goes where the packaged shell starts it from", () => {
  const cases = [
    ["linux", "linux"],
    ["mac", "darwin"],
    ["win", "win32"],
  ] as const;
  for (const [section, platform] of cases) {
    const [resource] = builder[section].extraResources;
    // What `npm run dist` builds for that platform, per architecture.
    expect(resolve(REPO_ROOT, resource.from)).toBe(serverBinaryPath(platform, ARCH_MACRO));
    const packaged = serverCommand({
      packaged: true,
      resourcesPath: "/r",
      repoRoot: "/",
      dataDir: "/d",
      platform,
    });
    expect(join("/r", resource.to)).toBe(packaged.command);
  }
});

test("the shell bundles to exactly the files the package lists; the preload requires only electron", async () => {
  const outdir = join(dir.path, "dist");
  const outputs = await buildShell(outdir);
  const listed = outputs.map((path) => join("dist", relative(outdir, path))).sort();
  expect(listed).toEqual(builder.files.filter((f: string) => f.startsWith("dist/")).sort());
  expect(listed).toContain(desktopPkg.main);
  const requires = (file: string) =>
    [...readFileSync(join(outdir, file), "utf8").matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
  expect(new Set(requires("preload.cjs"))).toEqual(new Set(["electron"]));
  // The app ships no node_modules: main needs Electron and Node's built-ins only.
  for (const name of requires("main.cjs"))
    expect(name === "electron" || name?.startsWith("node:")).toBe(true);
  expect(readFileSync(join(outdir, "main.cjs"), "utf8")).not.toContain(REPO_ROOT);
});
