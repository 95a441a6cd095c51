/**
 * `atrium backup` over a data dir whose workspaces hold what a user's sandbox can leave there: a named
 * pipe, a listening Unix socket, a device node (root can make one), a symlink to a host secret. The real
 * command (a subprocess, as an operator runs it) copies everything it can, lists what it skipped and
 * exits 0; the link is copied as a link, never as the file it points to.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { backup } from "../../server/backup-command.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

test("pipes, sockets and devices in a workspace are skipped and listed; everything else is copied; exit 0", async () => {
  const data = join(dir.path, "data");
  const workspace = join(data, "workspaces", "ann");
  mkdirSync(join(workspace, "nested"), { recursive: true });
  const db = new Database(join(data, "app.db"));
  db.exec("CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('row');");
  db.close();
  writeFileSync(join(workspace, "notes.txt"), "notes");
  writeFileSync(join(workspace, "nested", "deep.txt"), "deep", { mode: 0o640 });
  symlinkSync("/etc/shadow", join(workspace, "shadow"));
  expect(Bun.spawnSync(["mkfifo", join(workspace, "pipe")]).exitCode).toBe(0);
  const made = ["mknod", join(workspace, "nested", "null"), "c", "1", "3"];
  expect(process.getuid?.()).toBe(0);
  expect(Bun.spawnSync(made).exitCode).toBe(0);
  const socket = Bun.listen({ unix: join(workspace, "sock"), socket: { data() {} } });

  const target = join(dir.path, "copy");
  try {
    const run = Bun.spawn(
      [process.execPath, join(REPO_ROOT, "server/main.ts"), "backup", target, "--data-dir", data],
      { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } },
    );
    const [out, err, code] = await Promise.all([
      new Response(run.stdout).text(),
      new Response(run.stderr).text(),
      run.exited,
    ]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toContain("skipped 3 entries that a backup cannot copy:");
    expect(out).toContain("  workspaces/ann/pipe (named pipe)\n");
    expect(out).toContain("  workspaces/ann/sock (socket)\n");
    expect(out).toContain("  workspaces/ann/nested/null (device)\n");
  } finally {
    socket.stop(true);
  }

  const copied = join(target, "workspaces", "ann");
  expect(readdirSync(copied).sort()).toEqual(["nested", "notes.txt", "shadow"]);
  expect(readdirSync(join(copied, "nested"))).toEqual(["deep.txt"]);
  expect(readFileSync(join(copied, "notes.txt"), "utf8")).toBe("notes");
  expect(readFileSync(join(copied, "nested", "deep.txt"), "utf8")).toBe("deep");
  expect(lstatSync(join(copied, "nested", "deep.txt")).mode & 0o777).toBe(0o640);
  expect(lstatSync(join(copied, "shadow")).isSymbolicLink()).toBe(true);
  expect(readlinkSync(join(copied, "shadow"))).toBe("/etc/shadow");
  const restored = new Database(join(target, "app.db"), { readonly: true });
  expect(restored.query("SELECT v FROM kept").all()).toEqual([{ v: "row" }]);
  restored.close();
});

test("a folder swapped for a link to /etc while backups run never puts a host file into one", async () => {
  const data = join(dir.path, "racing");
  const workspace = join(data, "workspaces", "ann");
  mkdirSync(join(workspace, "real"), { recursive: true });
  new Database(join(data, "app.db")).close();
  writeFileSync(join(workspace, "real", "passwd"), "the user's own file");
  // What a sandbox does in a loop: the folder becomes a link to /etc and back.
  const swapper = Bun.spawn(
    [
      "/bin/sh",
      "-c",
      'cd "$0" && while :; do mv real held; ln -s /etc real; rm real; mv held real; done',
      workspace,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  const hostPasswd = readFileSync("/etc/passwd", "utf8");
  try {
    for (let i = 0; i < 40; i++) {
      const target = join(dir.path, `race-${i}`);
      backup(data, target);
      const folder = join(target, "workspaces", "ann", "real");
      const entry = lstatSync(folder, { throwIfNoEntry: false });
      if (entry?.isSymbolicLink()) expect(readlinkSync(folder)).toBe("/etc");
      else if (entry?.isDirectory())
        for (const name of readdirSync(folder))
          expect(readFileSync(join(folder, name), "utf8")).not.toBe(hostPasswd);
      expect(readdirSync(join(target, "workspaces", "ann")).length).toBeLessThanOrEqual(2);
    }
  } finally {
    swapper.kill("SIGKILL");
    await swapper.exited;
  }
});
