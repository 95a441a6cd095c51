/**
 * The workspace quota binds what sandboxes write (server/sandbox/quota-watch.ts), in the real jail: a
 * command in a user's sandbox writing past the quota in many 1 MiB files (each well under the per-file
 * limit, RLIMIT_FSIZE) is stopped with a message naming the quota, and the host holds at most the quota
 * plus the stated slack; a sandbox over its quota may run and delete but is stopped again when it grows;
 * many empty files are stopped at `storage.workspace_max_files`; local mode's per-command shell is held
 * the same way. Space no walk shows is held too: blocks reserved past a file's end are refused (one
 * such call once took any amount of disk), and files deleted while a process holds them open or mapped
 * count until they are let go. (API writes past the quota: tests/turns/budgets.test.ts.)
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { confinementFor } from "../../server/sandbox/confinement.ts";
import { deletedMappings, heldWithoutName } from "../../server/sandbox/held-files.ts";
import { detectSandbox } from "../../server/sandbox/isolation.ts";
import { DEFAULT_LIMITS } from "../../server/sandbox/limits.ts";
import { measureFolder, QuotaExceeded, QuotaWatch } from "../../server/sandbox/quota-watch.ts";
import { jailedExec } from "../../server/sandbox/shell-jail.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { descendants, runIn } from "../helpers/jail.ts";
import { tempDir } from "../helpers/tmp.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

setDefaultTimeout(120_000);

const MIB = 1024 * 1024;
const QUOTA = 32 * MIB;
/** What docs/security.md states a sandbox may write past its quota before it is stopped. */
const SLACK = 256 * MIB;
const MAX_ENTRIES = 2000;

const dir = tempDir();
const db = new Database(":memory:");
migrate(db, [sandboxMigrations]);
const quota = new QuotaWatch({ dataDir: dir.path, limitBytes: QUOTA, maxEntries: MAX_ENTRIES });
const provider = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, quota });
afterAll(async () => {
  await provider.close();
  quota.close();
  db.close();
  dir.remove();
});

/** Writes 1 MiB files until 2 GiB, stopping at the first refused write. */
const FILL = `mkdir -p fill && i=0; while [ $i -lt 2048 ]; do head -c ${MIB} /dev/zero > fill/f$i || exit 1; i=$((i+1)); done; echo wrote everything`;
const OVER =
  /^The workspace holds \d+\.\d MiB, more than its quota of 32\.0 MiB \(policy storage\.workspace_quota_bytes\)\. The sandbox was stopped and nothing more can be written; delete files to free space \(while over, commands may run but the workspace must not grow\)\.$/;

describe("a user's long-lived sandbox", () => {
  test("a command writing past the quota in many files is stopped with a clear message; the host holds at most quota + slack", async () => {
    await runIn(provider, "ann", "true");
    const jail = provider.jailPid("ann") as number;
    const tree = [jail, ...descendants(jail)];
    const error = await runIn(provider, "ann", FILL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExceeded);
    expect((error as Error).message).toMatch(OVER);

    // The sandbox is stopped: its processes are gone, so nothing keeps writing.
    expect(provider.jailPid("ann")).toBeUndefined();
    await waitFor(() => tree.every(processGone), { what: "the sandbox's processes to end" });
    const workspace = ownerFolders(dir.path, "ann").workspace;
    const { bytes } = await measureFolder(workspace);
    expect(bytes).toBeGreaterThan(QUOTA);
    expect(bytes).toBeLessThanOrEqual(QUOTA + SLACK);
    expect(readdirSync(join(workspace, "fill")).length).toBeLessThan(2048);
  });

  test("started again over the quota, it may run and delete but is stopped as soon as it grows", async () => {
    const listed = await runIn(provider, "ann", "ls fill | wc -l; rm fill/f0 fill/f1; echo removed");
    expect(listed.exitCode).toBe(0);
    expect(listed.out).toContain("removed");
    const grown = await runIn(
      provider,
      "ann",
      `head -c ${4 * MIB} /dev/zero > more; sleep 20; echo not stopped`,
    ).catch((e: unknown) => e);
    expect(grown).toBeInstanceOf(QuotaExceeded);
    expect((grown as Error).message).toMatch(OVER);
    // Back under the quota (files deleted through the API, or as here), it runs as before.
    const workspace = ownerFolders(dir.path, "ann").workspace;
    for (const name of readdirSync(join(workspace, "fill")))
      Bun.spawnSync(["rm", join(workspace, "fill", name)]);
    Bun.spawnSync(["rm", "-f", join(workspace, "more")]);
    expect((await runIn(provider, "ann", `head -c ${MIB} /dev/zero > ok && echo fine`)).out).toBe("fine\n");
  });

  test("many empty files are stopped at storage.workspace_max_files", async () => {
    const error = await runIn(
      provider,
      "bob",
      "mkdir many && cd many && i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done; echo wrote everything",
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExceeded);
    expect((error as Error).message).toMatch(
      /^The workspace holds \d+ files and folders, more than its 2000 \(policy storage\.workspace_max_files\)\. The sandbox was stopped/,
    );
    const { entries } = await measureFolder(ownerFolders(dir.path, "bob").workspace);
    expect(entries).toBeGreaterThan(MAX_ENTRIES);
    expect(entries).toBeLessThan(20000);
  });
});

describe("space that no walk of the workspace shows", () => {
  // Reserving blocks past a file's end: fallocate with FALLOC_FL_KEEP_SIZE, and the generic
  // FS_IOC_RESVSP64 ioctl that does the same. RLIMIT_FSIZE does not apply (the size stays 0), and one
  // call can take the whole disk before any watchdog looks. Punching a hole and plain fallocate stay.
  const RESERVE = `
import ctypes, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_char_p]
def result(r): return "ok" if r == 0 else os.strerror(ctypes.get_errno())
fd = os.open("reserved", os.O_RDWR | os.O_CREAT)
out = {"keepSize": result(libc.fallocate(fd, 1, 0, ${64 * MIB}))}
resv = struct.pack("hhxxxxqqiI16x", 0, 0, 0, ${64 * MIB}, 0, 0)
out["resvsp64"] = result(libc.ioctl(fd, 0x4030582A, resv))
out["zeroRangeKeepSize"] = result(libc.fallocate(fd, 0x11, 0, ${64 * MIB}))
out["plain"] = result(libc.fallocate(fd, 0, 0, ${MIB}))
out["punchHole"] = result(libc.fallocate(fd, 3, 0, 4096))
st = os.fstat(fd)
out["allocatedMiB"] = round(st.st_blocks * 512 / ${MIB})
print(json.dumps(out))
`;

  test("blocks reserved past a file's end are refused, so no single call can fill the disk", async () => {
    const run = await runIn(provider, "cid", `python3 -c '${RESERVE}'`);
    expect(JSON.parse(run.out)).toEqual({
      keepSize: "Operation not supported",
      resvsp64: "Operation not supported",
      zeroRangeKeepSize: "Operation not supported",
      plain: "ok",
      punchHole: "ok",
      allocatedMiB: 1,
    });
  });

  test("files deleted while held open count until they are closed", async () => {
    // Three 40 MiB files, each deleted right after it was opened, held by a process in the background.
    const hold = `(exec 3>a 4>b 5>c; rm a b c; for fd in 3 4 5; do head -c ${40 * MIB} /dev/zero >&$fd; done; sleep 60) >/dev/null 2>&1 &
sleep 20; echo not stopped`;
    await runIn(provider, "dee", "true");
    const jail = provider.jailPid("dee") as number;
    const tree = [jail, ...descendants(jail)];
    const error = await runIn(provider, "dee", hold).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExceeded);
    expect((error as Error).message).toMatch(OVER);
    // Its processes gone, the space is free again (and no longer hides the next test's growth).
    await waitFor(() => tree.every(processGone), { what: "the sandbox's processes to end" });
  });

  test("files deleted while only a memory mapping holds them count too", async () => {
    const mapped = `
import mmap, os, time
for name in ("m1", "m2"):
    fd = os.open(name, os.O_RDWR | os.O_CREAT)
    os.write(fd, bytes(${40 * MIB}))
    m = mmap.mmap(fd, 4096)
    os.close(fd)
    os.unlink(name)
    globals()[name] = m
time.sleep(60)
`;
    const error = await runIn(
      provider,
      "eve",
      `python3 -c '${mapped}' >/dev/null 2>&1 & sleep 20; echo not stopped`,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExceeded);
    expect((error as Error).message).toMatch(OVER);
  });
});

test("a server that may not follow another process's mappings still counts as far as they reach", async () => {
  const workspace = join(dir.path, "mapped");
  mkdirSync(workspace);
  const child = Bun.spawn(
    [
      "python3",
      "-c",
      `import mmap, os, sys, time
fd = os.open("big", os.O_RDWR | os.O_CREAT)
os.write(fd, bytes(${3 * MIB}))
m = mmap.mmap(fd, ${MIB}, offset=${MIB})
os.close(fd)
os.unlink("big")
print("ready", flush=True)
time.sleep(60)`,
    ],
    { cwd: workspace, stdout: "pipe" },
  );
  try {
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const device = statSync(workspace).dev;
    // The mapping reaches 2 MiB into the file; followed (root may), the file's whole 3 MiB count.
    expect([...deletedMappings(child.pid, device).values()]).toEqual([2 * MIB]);
    expect(heldWithoutName([child.pid], device)).toEqual({ bytes: 3 * MIB, files: 1 });
  } finally {
    child.kill("SIGKILL");
  }
});

test("local mode's shell: a command writing past the quota is stopped the same way", async () => {
  const plan = detectSandbox().shellPlan;
  if (!plan) throw new Error("the jail is needed here");
  const workspace = ownerFolders(dir.path, "local").workspace;
  mkdirSync(workspace, { recursive: true });
  const exec = jailedExec(
    {
      plan,
      limits: DEFAULT_LIMITS,
      network: "none",
      confinement: confinementFor("bubblewrap", DEFAULT_LIMITS),
      quota,
    },
    workspace,
  );
  const error = await exec(FILL, workspace, { onData: () => {} }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(QuotaExceeded);
  expect((error as Error).message).toMatch(OVER);
  const { bytes } = await measureFolder(workspace);
  expect(bytes).toBeGreaterThan(QUOTA);
  expect(bytes).toBeLessThanOrEqual(QUOTA + SLACK);
});
