/**
 * The limits the jail reports are the limits in force: /health/ready and the settings view say what
 * detectSandbox found, and the host's view of a live interpreter agrees (its uid, its cgroups, its
 * rlimits). Real memory is bounded with a clear reason (a memory cgroup, or the watchdog without one),
 * and the fallback for a root server without a pids cgroup (a real unprivileged uid) bounds processes.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { SandboxKilled } from "../../server/sandbox/interpreter.ts";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { detectSandbox } from "../../server/sandbox/isolation.ts";
import { type JailPlan, jailArgs } from "../../server/sandbox/jail.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "../../server/sandbox/limits.ts";
import { descendants, hostUid, viaJs } from "../helpers/jail.ts";
import { listen } from "../helpers/listen.ts";
import { turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(180_000);

const MIB = 1024 * 1024;
const pools: InterpreterPool[] = [];
afterAll(() => {
  for (const pool of pools) pool.close();
});

function pool(options: ConstructorParameters<typeof InterpreterPool>[0]): InterpreterPool {
  const created = new InterpreterPool({ warm: 0, ...options });
  pools.push(created);
  return created;
}

/** Fills memory 64 MiB at a time up to 4 GiB; the sandbox must be stopped before it gets there. */
const FILL_MEMORY = viaJs(
  "const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(64 << 20, 1)); return kept.length;",
);

describe("what is in force", () => {
  test("/health/ready and the settings view report what the jail detected", async () => {
    const t = await turnsApp({ env: { APP_SANDBOX_WARM: "0" } });
    const server = listen(t);
    try {
      const { report } = detectSandbox();
      expect(report).toMatchObject({ isolation: "bubblewrap", capabilities: "dropped", seccomp: "filter" });
      // Root here (CI is root): never host root inside the jail where user namespaces allow it.
      expect(report.user).toBe("unprivileged");
      expect((await (await fetch(`${server.url}/health/ready`)).json()).sandbox).toEqual(report);
      expect((await (await fetch(`${server.url}/api/settings`)).json()).sandbox).toEqual(report);
      // A pool forced to run without the jail says so in the settings view.
      t.family("turns").runtime.sandbox.use(pool({ isolation: "none" }));
      expect((await (await fetch(`${server.url}/api/settings`)).json()).sandbox).toMatchObject({
        isolation: "none",
        capabilities: "unchanged",
        user: "server",
      });
    } finally {
      await server.stop();
      await t.close();
    }
  });

  test("a live interpreter runs as the reported uid, in the reported cgroups, under the policy's rlimits", async () => {
    const limits: SandboxLimits = {
      ...DEFAULT_LIMITS,
      processes: 200,
      memoryBytes: 900 * MIB,
      cpuSeconds: 321,
    };
    const jailed = pool({ limits });
    const py = await jailed.acquire();
    try {
      const { report } = detectSandbox();
      const tree = descendants(py.pid);
      const interpreter = tree.find((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("sandbox"),
      ) as number;
      expect(interpreter).toBeGreaterThan(0);
      if (report.user === "unprivileged") expect(hostUid(interpreter)).not.toBe(0);
      const status = readFileSync(`/proc/${interpreter}/status`, "utf8");
      expect(status).toMatch(/CapEff:\s+0+\n/);
      expect(status).toMatch(/CapBnd:\s+0+\n/);
      expect(status).toMatch(/Seccomp:\s+2\n/);
      const rlimits = readFileSync(`/proc/${interpreter}/limits`, "utf8");
      expect(rlimits).toMatch(/Max cpu time\s+321\s+321/);
      expect(rlimits).toMatch(
        new RegExp(`Max address space\\s+${limits.addressSpaceBytes}\\s+${limits.addressSpaceBytes}`),
      );
      expect(rlimits).toMatch(new RegExp(`Max file size\\s+${limits.fileSizeBytes}\\s+`));
      expect(rlimits).toMatch(new RegExp(`Max open files\\s+${limits.openFiles}\\s+`));
      const cgroups = readFileSync(`/proc/${interpreter}/cgroup`, "utf8");
      const plan = detectSandbox().plan;
      if (report.processLimit === "cgroup") {
        const dir = `${plan?.cgroups?.pids}/${py.pid}`;
        expect(cgroups).toContain(`/${py.pid}\n`);
        expect(readFileSync(`${dir}/pids.max`, "utf8").trim()).toBe("200");
      }
      if (report.memoryLimit === "cgroup" && plan?.cgroups?.version === 1) {
        const dir = `${plan.cgroups.memory}/${py.pid}`;
        expect(readFileSync(`${dir}/memory.limit_in_bytes`, "utf8").trim()).toBe(String(900 * MIB));
      }
    } finally {
      jailed.release(py);
    }
  });
});

describe("memory", () => {
  for (const isolation of ["bubblewrap", "none"] as const) {
    test(`a sandbox past its memory bound is stopped, and says why (isolation ${isolation})`, async () => {
      const small = pool({ isolation, limits: { ...DEFAULT_LIMITS, memoryBytes: 512 * MIB } });
      const py = await small.acquire();
      await py.init([], {}, 10_000);
      const error = await py.run(FILL_MEMORY, { timeoutMs: 60_000 }).catch((e) => e);
      expect(error).toBeInstanceOf(SandboxKilled);
      expect((error as SandboxKilled).reason).toBe("memory");
      expect((error as SandboxKilled).message).toContain("memory");
      small.release(py);
    });
  }
});

describe("a root server without a pids cgroup", () => {
  /** Starts up to 60 background sleeps (they end with the jail); prints how many it got. */
  function forkCount(plan: JailPlan): { started: number; stderr: string } {
    const script = "for i in $(seq 1 60); do sleep 30 & echo started=$i; done";
    const args = jailArgs(
      plan,
      { ...DEFAULT_LIMITS, processes: 40 },
      {
        system: ["/usr", "/bin", "/lib", "/lib64"],
        readOnly: [],
        tmpfs: [],
        chdir: "/",
        // dash, not bash: bash retries a refused fork for seconds before it gives up.
        command: ["/bin/sh", "-c", script],
      },
    );
    const run = Bun.spawnSync(args, { env: {}, stdout: "pipe", stderr: "pipe" });
    const counts = [...run.stdout.toString().matchAll(/started=(\d+)/g)].map((m) => Number(m[1]));
    return { started: counts.at(-1) ?? 0, stderr: run.stderr.toString() };
  }

  test("runs the jail as a real unprivileged uid, where the kernel bounds its processes (not as host root)", () => {
    const { shellPlan } = detectSandbox();
    const setpriv = Bun.which("setpriv");
    if (!shellPlan || !setpriv) throw new Error("bubblewrap and setpriv are needed here");
    const withoutCgroups = { ...shellPlan, cgroups: undefined, innerProcessLimit: true };
    // Host root, even without a capability: RLIMIT_NPROC is never applied.
    expect(forkCount(withoutCgroups).started).toBe(60);
    const unprivileged = forkCount({ ...withoutCgroups, dropTo: { setpriv, uid: 65534 } });
    expect(unprivileged.started).toBeGreaterThan(0);
    expect(unprivileged.started).toBeLessThan(40);
    expect(unprivileged.stderr).toContain("Cannot fork");
  });
});
