/**
 * The policy's limits in a user's long-lived sandbox: a command that needs more memory than
 * `sandbox.memory_mb` is stopped and says so (the sandbox lives on for the next command), abort and exit
 * codes behave as pi's shell contract wants, `sandbox.network` decides egress for the sandbox's lifetime,
 * and a sandbox nobody uses is stopped after the idle time (never under a running command).
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../server/sandbox/limits.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { tempDir } from "../helpers/tmp.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

setDefaultTimeout(60_000);

const dir = tempDir();
const db = new Database(":memory:");
let provider: LocalSandboxProvider;

beforeAll(() => {
  migrate(db, [sandboxMigrations]);
  provider = new LocalSandboxProvider(sqlitePort(db), {
    dataDir: dir.path,
    limits: { ...DEFAULT_LIMITS, memoryBytes: 96 * 1024 * 1024 },
  });
});
afterAll(async () => {
  await provider.close();
  db.close();
  dir.remove();
});

const quiet = { onData: () => {} };

/** A command's whole output. */
async function output(command: string): Promise<string> {
  const chunks: Buffer[] = [];
  await provider.exec("ann", command, { onData: (d) => chunks.push(d) });
  return Buffer.concat(chunks).toString("utf8");
}

test("a command over the memory limit is stopped with a message naming the limit; the next one runs", async () => {
  await provider.exec("ann", "true", quiet);
  await expect(
    provider.exec("ann", `python3 -c "a = bytearray(400 * 1024 * 1024); print(len(a))"`, quiet),
  ).rejects.toThrow("more than 96 MiB of memory (policy sandbox.memory_mb)");
  expect(await output("echo alive")).toBe("alive\n");
});

test("an aborted command is killed with its process group and rejects `aborted`", async () => {
  const controller = new AbortController();
  const running = provider.exec("ann", "sleep 30 & sleep 30", { ...quiet, signal: controller.signal });
  setTimeout(() => controller.abort(), 200);
  await expect(running).rejects.toThrow("aborted");
  expect((await output("ps -eo comm | grep -c '^sleep$' || true")).trim()).toBe("0");
});

test("exit codes come back as the command's", async () => {
  expect(await provider.exec("ann", "exit 7", quiet)).toEqual({ exitCode: 7 });
});

describe("the network (policy sandbox.network)", () => {
  let hits = 0;
  const host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      hits++;
      return new Response("host");
    },
  });
  afterAll(() => host.stop(true));

  // A default route only with egress; the host's loopback and the gateway never lead to the host.
  const probe = `awk '$2 == "00000000" {print "default-route", $3}' /proc/net/route
gw=$(awk '$2 == "00000000" {print $3}' /proc/net/route | sed 's/../& /g' | awk '{printf "%d.%d.%d.%d", "0x"$4, "0x"$3, "0x"$2, "0x"$1}')
for target in 127.0.0.1 $gw; do timeout 3 bash -c "exec 3<>/dev/tcp/$target/${host.port}" 2>/dev/null && echo "reached $target" || echo "refused $target"; done`;

  test("none by default: no route out, the host's port unreachable", async () => {
    const out = await output(probe);
    expect(out).not.toContain("default-route");
    expect(out).toContain("refused 127.0.0.1");
    expect(out).not.toContain("reached");
    expect(hits).toBe(0);
  });

  test("egress: a routed network through pasta for the sandbox's lifetime, still not the host's loopback", async () => {
    const egress = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, network: "egress" });
    try {
      const chunks: Buffer[] = [];
      await egress.exec("eve", probe, { onData: (d) => chunks.push(d) });
      const out = Buffer.concat(chunks).toString("utf8");
      expect(out).toContain("default-route");
      expect(out).toContain("refused 127.0.0.1");
      expect(out).not.toContain("reached");
      expect(hits).toBe(0);
    } finally {
      await egress.close();
    }
  });
});

test("a sandbox nobody uses is stopped after the idle time; the next command starts a fresh one", async () => {
  const idle = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, idleMs: 300 });
  try {
    await idle.exec("ida", "echo old > /tmp/marker", quiet);
    const pid = idle.jailPid("ida");
    expect(pid).toBeNumber();
    await waitFor(() => idle.jailPid("ida") === undefined, {
      what: "the idle sandbox to stop",
      timeoutMs: 5000,
    });
    // The provider forgets the jail as it kills it; the kernel takes a moment more to end its processes.
    await waitFor(() => processGone(pid as number), { what: "the idle jail's processes to end" });
    const chunks: Buffer[] = [];
    await idle.exec("ida", "cat /tmp/marker 2>&1 || true", { onData: (d) => chunks.push(d) });
    expect(Buffer.concat(chunks).toString()).toContain("No such file");
  } finally {
    await idle.close();
  }
});

test("a long command keeps its sandbox however long the idle time", async () => {
  const idle = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, idleMs: 100 });
  try {
    const chunks: Buffer[] = [];
    await idle.exec("ivy", "sleep 2.5; echo finished", { onData: (d) => chunks.push(d) });
    expect(Buffer.concat(chunks).toString()).toBe("finished\n");
  } finally {
    await idle.close();
  }
});
