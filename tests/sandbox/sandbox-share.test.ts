/**
 * How sandboxes share the server: at most `sandbox.max_user_sandboxes` users' sandboxes run at once (a
 * start beyond it stops the least recently used idle one, or is refused with a clear message when every
 * one is busy), and each sandbox, a user's or a turn's interpreter, gets its CPU share and ceiling
 * (policy sandbox.cpu_weight, cpu_cores) in a cpu cgroup of its own: read back from the cgroup files.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { detectSandbox } from "../../server/sandbox/isolation.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "../../server/sandbox/limits.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider, SandboxCapacityError } from "../../server/sandbox/users/provider.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { descendants, runIn } from "../helpers/jail.ts";
import { tempDir } from "../helpers/tmp.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

setDefaultTimeout(120_000);

const dir = tempDir();
const db = new Database(":memory:");
migrate(db, [sandboxMigrations]);
const providers: LocalSandboxProvider[] = [];
afterAll(async () => {
  for (const provider of providers) await provider.close();
  db.close();
  dir.remove();
});

function provider(options: { maxSandboxes?: number; limits?: SandboxLimits }): LocalSandboxProvider {
  const made = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, ...options });
  providers.push(made);
  return made;
}

describe("the cap on running sandboxes (policy sandbox.max_user_sandboxes)", () => {
  test("a start beyond it stops the least recently used idle sandbox; with every one busy it is refused", async () => {
    const sandboxes = provider({ maxSandboxes: 2 });
    await runIn(sandboxes, "ann", "true");
    await runIn(sandboxes, "bob", "true");
    await runIn(sandboxes, "ann", "true"); // Bob is now the least recently used
    const bobJail = sandboxes.jailPid("bob") as number;
    await runIn(sandboxes, "cat", "true");
    expect(sandboxes.liveCount).toBe(2);
    expect(sandboxes.jailPid("bob")).toBeUndefined();
    await waitFor(() => processGone(bobJail), { what: "Bob's jail to end" });
    expect(sandboxes.jailPid("ann")).toBeNumber();
    expect(sandboxes.jailPid("cat")).toBeNumber();
    // Stopped for room, not by anyone: the registry still says started, so his next command restarts it.
    expect((await sandboxes.registry.of("bob"))?.state).toBe("started");

    // Both running sandboxes busy: a third user's start is refused, and nothing was stopped for it.
    const busy = [runIn(sandboxes, "ann", "sleep 3"), runIn(sandboxes, "cat", "sleep 3")];
    await waitFor(() => sandboxes.liveCount === 2);
    const refused = await runIn(sandboxes, "dan", "true").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxCapacityError);
    expect((refused as Error).message).toBe(
      "All 2 sandboxes this server runs at once are busy (policy sandbox.max_user_sandboxes); try again when a command finishes",
    );
    expect(sandboxes.liveCount).toBe(2);
    expect(sandboxes.jailPid("dan")).toBeUndefined();
    await Promise.all(busy);
    expect((await runIn(sandboxes, "dan", "echo started")).out).toBe("started\n");
    expect(sandboxes.liveCount).toBe(2);
  });
});

describe("the CPU (policy sandbox.cpu_weight, cpu_cores)", () => {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, cpuWeight: 50, cpuCores: 0.5 };

  /** What the sandbox started as `pid` has in its cpu cgroup. */
  function cpuSettings(pid: number): Record<string, string> {
    const cgroups = detectSandbox().plan?.cgroups;
    const base = cgroups?.cpu as string;
    const read = (file: string) => readFileSync(join(base, String(pid), file), "utf8").trim();
    return cgroups?.version === 1
      ? {
          weight: read("cpu.shares"),
          max: `${read("cpu.cfs_quota_us")} ${read("cpu.cfs_period_us")}`,
          group: readFileSync(join(base, "cpu.shares"), "utf8").trim(),
        }
      : {
          weight: read("cpu.weight"),
          max: read("cpu.max"),
          group: readFileSync(join(base, "cpu.weight"), "utf8").trim(),
        };
  }

  const expected = () =>
    detectSandbox().plan?.cgroups?.version === 1
      ? { weight: "512", max: "50000 100000", group: String(1024 * availableParallelism()) }
      : { weight: "50", max: "50000 100000", group: String(Math.min(10000, 100 * availableParallelism())) };

  test("the host offers a cpu controller here, and the jail reports it", () => {
    expect(detectSandbox().report.cpuLimit).toBe("cgroup");
    expect(detectSandbox().plan?.cgroups?.cpu).toBeString();
  });

  test("a user's sandbox has its share and ceiling in its own cpu cgroup", async () => {
    const sandboxes = provider({ limits });
    await runIn(sandboxes, "eve", "sleep 30 >/dev/null 2>&1 &");
    const jail = sandboxes.jailPid("eve") as number;
    expect(cpuSettings(jail)).toEqual(expected());
    // Every process of the sandbox, what its commands start included, is in that cgroup.
    const members = readFileSync(
      join(detectSandbox().plan?.cgroups?.cpu as string, String(jail), "cgroup.procs"),
      "utf8",
    )
      .trim()
      .split("\n")
      .map(Number);
    const tree = [jail, ...descendants(jail)];
    expect(tree.length).toBeGreaterThanOrEqual(4);
    expect(members.sort()).toEqual(tree.sort());
  });

  test("a turn's interpreter has its share and ceiling in its own cpu cgroup", async () => {
    const pool = new InterpreterPool({ warm: 0, max: 1, limits });
    try {
      const interpreter = await pool.acquire();
      expect(cpuSettings(interpreter.pid)).toEqual(expected());
      pool.release(interpreter);
    } finally {
      pool.close();
    }
  }, 60_000);
});
