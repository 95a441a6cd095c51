/**
 * The workspace quota binds what sandboxes write (server/sandbox/quota-watch.ts), in the real jail: a
 * command in a user's sandbox writing past the quota in many 1 MiB files (each well under the per-file
 * limit, RLIMIT_FSIZE) is stopped with a message naming the quota, and the host holds at most the quota
 * plus the stated slack; a sandbox over its quota may run and delete but is stopped again when it grows;
 * many empty files are stopped at `storage.workspace_max_files`; local mode's per-command shell is held
 * the same way. (API writes past the quota: tests/turns/budgets.test.ts.)
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { confinementFor } from "../../server/sandbox/confinement.ts";
import { detectSandbox } from "../../server/sandbox/isolation.ts";
import { DEFAULT_LIMITS } from "../../server/sandbox/limits.ts";
import { measureFolder, QuotaExceeded, QuotaWatch } from "../../server/sandbox/quota-watch.ts";
import { jailedExec } from "../../server/sandbox/shell-jail.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { Store } from "../../server/storage/store.ts";
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
const provider = new LocalSandboxProvider(new Store(db), { dataDir: dir.path, quota });
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
