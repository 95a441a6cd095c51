/**
 * Confined file operations (server/workspace/beneath.ts) and the Files API store on top of them: a
 * symlinked parent, a symlinked last component, `..`, an absolute symlink and a /proc magic link are
 * each refused, and nothing outside the root is created, read or deleted; a folder swapped for a
 * symlink between the store's check and its use (the race a jail can run) is refused, where the old
 * checked-path code wrote outside; as root, what the server writes goes to the folder's owner.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { bootstrap, withAgentWorkspace } from "../../server/chat/workspace/contract.ts";
import { tree } from "../../server/chat/workspace/files.ts";
import { reindex, search } from "../../server/chat/workspace/projection.ts";
import { AppError } from "../../server/http/errors.ts";
import { TurnWorkspaceFiles } from "../../server/turns/stores/workspace-files.ts";
import { Beneath, beneathAvailable, forceBeneathFallback } from "../../server/workspace/beneath.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { tempDir } from "../helpers/tmp.ts";

let dir: { path: string; remove(): void };
let root: string;
let outside: string;
beforeEach(() => {
  dir = tempDir("atrium-beneath-");
  root = join(dir.path, "root");
  outside = join(dir.path, "outside");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret"), "outside secret");
});
afterEach(() => {
  forceBeneathFallback(false);
  dir.remove();
});

const outsideNames = () => readdirSync(outside).sort();

/**
 * The attacker in the jail: `mv NAME x; ln -s TARGET NAME; rm NAME; mv x NAME` in a loop, as plain
 * system calls in a process of its own (a shell's loop forks for each step and leaves the window shut
 * most of the time), putting the folder back even when the server made a new one by its name meanwhile
 * (else the loop sticks, and the old code could go 50,000 writes on a busy machine without losing).
 */
const swapping = (folder: string, name: string, target: string) =>
  Bun.spawn(
    [
      process.execPath,
      "-e",
      `const fs = require("node:fs");
       const [folder, name, target] = process.argv.slice(-3);
       process.chdir(folder);
       const quiet = (step) => { try { step(); } catch {} };
       for (;;) {
         quiet(() => fs.renameSync(name, name + ".x"));
         quiet(() => fs.symlinkSync(target, name));
         quiet(() => fs.unlinkSync(name));
         quiet(() => {
           // The server may have made a new folder by that name meanwhile: it goes, the old one comes back.
           if (fs.existsSync(name + ".x")) fs.rmSync(name, { recursive: true, force: true });
           fs.renameSync(name + ".x", name);
         });
       }`,
      folder,
      name,
      target,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
const code = (use: () => unknown) => {
  try {
    use();
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

test("openat2 is what runs here (Linux >= 5.6, as in CI)", () => {
  expect(process.platform).toBe("linux");
  expect(beneathAvailable()).toBe(true);
});

describe("every way out is refused, and nothing outside changes", () => {
  const ways: [string, () => void][] = [
    ["a symlinked parent", () => symlinkSync(outside, join(root, "link"))],
    [
      "an absolute symlink as the last component",
      () => symlinkSync(join(outside, "secret"), join(root, "link")),
    ],
    ["a relative symlink climbing out", () => symlinkSync("../outside", join(root, "link"))],
    ["a magic link (/proc/self/root)", () => symlinkSync("/proc/self/root", join(root, "link"))],
  ];
  for (const [name, plant] of ways) {
    test(name, () => {
      plant();
      const fs = new Beneath(root);
      const refusals = ["ELOOP", "EXDEV"];
      for (const path of ["link/secret", "link", "link/tmp/../secret"]) {
        expect(refusals).toContain(code(() => fs.readFile(path)));
        expect(refusals).toContain(code(() => fs.appendFile(path, "pwned")));
      }
      for (const path of ["link/new", "link/a/new", "link/../new"]) {
        expect(refusals).toContain(code(() => fs.writeFile(path, "pwned")));
        expect(refusals).toContain(code(() => fs.appendFile(path, "pwned")));
        expect(refusals).toContain(code(() => fs.createFile(path, "pwned")));
        expect(refusals).toContain(code(() => fs.mkdir(path)));
      }
      expect(refusals).toContain(code(() => fs.remove("link/secret", false)));
      expect(["ELOOP", "EXDEV"]).toContain(code(() => fs.walk("link", () => true)));
      // The link itself may be stat'ed (lstat) and removed, never what it points at.
      expect(fs.stat("link")?.isSymbolicLink()).toBe(true);
      expect(outsideNames()).toEqual(["secret"]);
      expect(readFileSync(join(outside, "secret"), "utf8")).toBe("outside secret");
      fs.remove("link", false);
      expect(outsideNames()).toEqual(["secret"]);
    });
  }

  test("`..` and absolute paths", () => {
    const fs = new Beneath(root);
    expect(code(() => fs.readFile("../outside/secret"))).toBe("EXDEV");
    expect(code(() => fs.readFile("sub/../../outside/secret"))).toBe("EXDEV");
    expect(code(() => fs.writeFile("../outside/new", "pwned"))).toBe("EXDEV");
    expect(code(() => fs.readFile(join(outside, "secret")))).toBe("EXDEV");
    expect(code(() => fs.remove("../outside/secret", false))).toBe("EXDEV");
    expect(outsideNames()).toEqual(["secret"]);
  });

  test("a named pipe is refused at once, not waited on", () => {
    Bun.spawnSync(["mkfifo", join(root, "pipe")]);
    expect(code(() => new Beneath(root).readFile("pipe"))).toBe("ENOTREG");
    const files = new TurnWorkspaceFiles(join(dir.path, "data"), "local", 1 << 20);
    files.list();
    Bun.spawnSync(["mkfifo", join(files.root, "pipe")]);
    expect(() => files.readText("pipe")).toThrow("pipe is a directory"); // the check's answer, as before
  });

  test("plain use works: write, read, append, stat, walk, delete", () => {
    const fs = new Beneath(root);
    fs.writeFile("a/b/c.txt", "hello");
    fs.appendFile("a/b/c.txt", " world");
    expect(fs.readFile("a/b/c.txt")?.toString()).toBe("hello world");
    expect(fs.stat("a/b")?.isDirectory()).toBe(true);
    const seen: string[] = [];
    fs.walk("a", (rel, name) => {
      seen.push(`${rel}${name}`);
      return true;
    });
    expect(seen).toEqual(["b", "b/c.txt"]);
    fs.remove("a/b/c.txt", false);
    fs.remove("a/b", true);
    expect(fs.stat("a/b")).toBeUndefined();
    expect(fs.readFile("a/nothing")).toBeUndefined();
  });
});

describe("a folder swapped for a symlink between the check and the use", () => {
  /** A store whose quota check (run after the path was checked, before the write) runs `between`. */
  const store = (between: () => void) => {
    const dataDir = join(dir.path, "data");
    const files = new TurnWorkspaceFiles(dataDir, "local", 1 << 20, async () => between);
    const base = ownerFolders(dataDir, "local").files;
    mkdirSync(join(base, "docs"), { recursive: true });
    writeFileSync(join(base, "docs", "note.txt"), "inside");
    const swap = () => {
      renameSync(join(base, "docs"), join(base, "docs.away"));
      symlinkSync(outside, join(base, "docs"));
    };
    return { files, base, swap };
  };

  const attempts: [string, (f: TurnWorkspaceFiles) => unknown][] = [
    ["create", (f) => f.put("docs/planted", "pwned")],
    ["overwrite", (f) => f.put("docs/secret", "pwned", { overwrite: true })],
    ["append", (f) => f.append("docs/planted", "pwned")],
  ];
  for (const [name, attempt] of attempts) {
    test(`${name}: the old checked path wrote outside; openat2 refuses`, async () => {
      // The old code, to show the hole is real and this test would catch it.
      forceBeneathFallback(true);
      let swapped = false;
      const old = store(() => {
        if (swapped) return;
        swapped = true;
        old.swap();
      });
      await attempt(old.files);
      const escaped =
        outsideNames().join() !== "secret" ||
        readFileSync(join(outside, "secret"), "utf8") !== "outside secret";
      expect(escaped).toBe(true);
      rmSync(join(dir.path, "data"), { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
      mkdirSync(outside);
      writeFileSync(join(outside, "secret"), "outside secret");

      forceBeneathFallback(false);
      swapped = false;
      const fixed = store(() => {
        if (swapped) return;
        swapped = true;
        fixed.swap();
      });
      let refused: unknown;
      try {
        await attempt(fixed.files);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).message).toBe("path must not go through a symbolic link");
      expect(outsideNames()).toEqual(["secret"]);
      expect(readFileSync(join(outside, "secret"), "utf8")).toBe("outside secret");
    });
  }

  test("the old checked path loses that race within a bounded number of writes", async () => {
    forceBeneathFallback(true);
    const dataDir = join(dir.path, "data");
    const files = new TurnWorkspaceFiles(dataDir, "local", 1 << 20);
    const base = ownerFolders(dataDir, "local").files;
    mkdirSync(join(base, "docs"), { recursive: true });
    const racer = swapping(base, "docs", outside);
    let tries = 0;
    try {
      for (; tries < 50_000 && outsideNames().length === 1; tries++) {
        try {
          await files.put(`docs/p${tries % 7}`, "pwned", { overwrite: true });
        } catch {}
        if (tries % 500 === 0) await Bun.sleep(0);
      }
    } finally {
      racer.kill();
      await racer.exited;
    }
    expect(outsideNames().length).toBeGreaterThan(1); // root wrote outside the workspace
  }, 120_000);

  test("a jail process swapping in a loop never gets a write, read or delete outside", async () => {
    const dataDir = join(dir.path, "data");
    const files = new TurnWorkspaceFiles(dataDir, "local", 1 << 20);
    const base = ownerFolders(dataDir, "local").files;
    mkdirSync(join(base, "docs"), { recursive: true });
    writeFileSync(join(outside, "note.txt"), "outside note");
    const racer = swapping(base, "docs", outside);
    let refused = 0;
    let done = 0;
    let readOutside = 0;
    try {
      for (let i = 0; i < 3000; i++) {
        for (const use of [
          () => files.put(`docs/p${i % 7}`, "pwned", { overwrite: true }),
          () => files.append("docs/note.txt", "pwned"),
          () => {
            if (files.readText("docs/note.txt").includes("outside note")) readOutside++;
          },
          () => files.delete("docs/note.txt"),
        ]) {
          try {
            await use();
            done++;
          } catch {
            refused++;
          }
        }
        if (i % 500 === 0) await Bun.sleep(0);
      }
    } finally {
      racer.kill();
      await racer.exited;
    }
    expect(refused).toBeGreaterThan(0); // the racer did get in the way
    expect(done).toBeGreaterThan(0);
    expect(readOutside).toBe(0);
    expect(outsideNames()).toEqual(["note.txt", "secret"]);
    expect(readFileSync(join(outside, "note.txt"), "utf8")).toBe("outside note");
  }, 120_000);
});

test("the workspace index and tree never read or list a host folder swapped in during the walk", async () => {
  const root = join(dir.path, "ws", "agent-workspace");
  bootstrap(root);
  writeFileSync(join(root, "memory", "note.md"), "inside words");
  writeFileSync(join(outside, "note.md"), "hostmarker words");
  writeFileSync(join(outside, "host-only-name"), "");
  const racer = swapping(root, "memory", outside);
  let leaked = 0;
  let listed = 0;
  try {
    for (let i = 0; i < 300; i++) {
      try {
        withAgentWorkspace(root, reindex);
        // A later reindex overwrites the item, so look after each one.
        if (withAgentWorkspace(root, (aw) => search(aw, "hostmarker")).length > 0) leaked++;
      } catch {}
      try {
        if (JSON.stringify(withAgentWorkspace(root, tree).nodes).includes("host-only-name")) listed++;
      } catch {}
      if (i % 20 === 0) await Bun.sleep(0);
    }
  } finally {
    racer.kill();
    await racer.exited;
  }
  expect(leaked).toBe(0);
  expect(listed).toBe(0);
}, 120_000);

test("the index database is only read and written beneath the folder: a symlinked indexes/, planted journal links (which broke the old index: SQLITE_CANTOPEN) and a swapping loop change nothing outside", async () => {
  const root = join(dir.path, "ws-index", "agent-workspace");
  bootstrap(root);
  writeFileSync(join(root, "memory", "note.md"), "inside words");
  const target = join(dir.path, "index-target");
  mkdirSync(target, { recursive: true });
  // A static symlink first: refused, nothing made there.
  rmSync(join(root, "indexes"), { recursive: true, force: true });
  symlinkSync(target, join(root, "indexes"));
  expect(() => withAgentWorkspace(root, reindex)).toThrow();
  expect(readdirSync(target)).toEqual([]);
  rmSync(join(root, "indexes"));
  mkdirSync(join(root, "indexes"));
  // SQLite opened by name also opens its journals by name: it refused planted links, and the index broke.
  for (const suffix of ["-wal", "-shm", "-journal"])
    symlinkSync(
      join(target, `planted${suffix}`),
      join(root, "indexes", `workspace-projection.sqlite${suffix}`),
    );
  withAgentWorkspace(root, reindex);
  expect(withAgentWorkspace(root, (aw) => search(aw, "inside")).length).toBe(1);
  expect(readdirSync(target)).toEqual([]);
  // Then a jail-like loop swapping the folder while the server rebuilds and reads the index.
  const racer = swapping(root, "indexes", target);
  let rounds = 0;
  try {
    // The racer needs a moment to start; then at least three seconds and over 100 rounds of rebuilds and
    // reads against it (a loaded machine takes longer for the rounds, not fewer of them).
    await Bun.sleep(100);
    for (const until = Date.now() + 3000; Date.now() < until || rounds <= 100; rounds++) {
      try {
        withAgentWorkspace(root, reindex);
        withAgentWorkspace(root, (aw) => search(aw, "inside"));
      } catch {}
      if (rounds % 10 === 0) await Bun.sleep(0);
    }
  } finally {
    racer.kill();
    await racer.exited;
  }
  expect(rounds).toBeGreaterThan(100);
  expect(readdirSync(target)).toEqual([]);
}, 120_000);

describe("ownership: the sandbox can edit what the server wrote", () => {
  test("in a workspace handed to 65534, new files and folders are 65534's; in root's, root's", async () => {
    expect(process.getuid?.()).toBe(0); // CI runs as root, as the server does in containers
    const dataDir = join(dir.path, "data");
    const files = new TurnWorkspaceFiles(dataDir, "local", 1 << 20);
    const workspace = ownerFolders(dataDir, "local").workspace;
    await files.put("mine/root.txt", "x");
    expect(statSync(join(workspace, "files/mine/root.txt")).uid).toBe(0);
    chownSync(workspace, 65534, 65534);
    await files.put("up/loaded.txt", "x");
    await files.append("up/log.txt", "x");
    await files.put("mine/root.txt", "y", { overwrite: true });
    for (const path of ["files/up", "files/up/loaded.txt", "files/up/log.txt", "files/mine/root.txt"])
      expect([path, lstatSync(join(workspace, path)).uid, lstatSync(join(workspace, path)).gid]).toEqual([
        path,
        65534,
        65534,
      ]);
    const boot = join(workspace, "agent-workspace");
    bootstrap(boot);
    expect(statSync(join(boot, "manifest.json")).uid).toBe(65534);
    expect(statSync(join(boot, "memory/daily")).uid).toBe(65534);
    expect(existsSync(join(boot, "system/constraints.md"))).toBe(true);
  });
});
