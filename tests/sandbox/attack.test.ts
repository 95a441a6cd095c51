/**
 * The jail holds when the server runs as root (CI is root): a real turn's Python reaches JavaScript
 * through pyodide's bridge, and that JavaScript has Bun's FFI, so every attempt below is native code
 * inside the jail. It tries to write and remount every mount it sees, the system calls that administer
 * the machine, to fork past the process limit (a bounded attempt whose children exit by themselves), to
 * allocate 8 GiB, to fill its tmpfs mounts, to write a host sysctl, and to read the server's secrets.
 * Each is refused or finds nothing, and the checkout is byte for byte the same afterwards.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectSandbox } from "../../server/sandbox/isolation.ts";
import { DEFAULT_LIMITS } from "../../server/sandbox/limits.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { checkoutHash, viaJs } from "../helpers/jail.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(240_000);

const CANARY = `canary-${crypto.randomUUID()}`;
let t: Awaited<ReturnType<typeof turnsApp>>;

beforeAll(async () => {
  process.env.ATRIUM_JAIL_CANARY = CANARY;
  t = await turnsApp();
  writeFileSync(join(t.dataDir, "secret.txt"), CANARY);
});

afterAll(async () => {
  delete process.env.ATRIUM_JAIL_CANARY;
  await t.close();
});

const LIBC = `const fs = process.getBuiltinModule("fs");
const ffi = process.getBuiltinModule("bun:ffi");
const libc = ffi.dlopen("libc.so.6", {
  mount: { args: ["ptr", "ptr", "ptr", "u64", "ptr"], returns: "i32" },
  unshare: { args: ["i32"], returns: "i32" },
  setns: { args: ["i32", "i32"], returns: "i32" },
  syscall: { args: ["i64", "i64", "i64", "i64", "i64", "i64"], returns: "i32" },
  __errno_location: { args: [], returns: "ptr" },
});
const errno = () => ffi.read.i32(libc.symbols.__errno_location(), 0);
const cs = (s) => ffi.ptr(Buffer.from(s + "\\0"));
const call = (f) => { const r = f(); return r === 0 ? "succeeded" : errno(); };`;

const binds = viaJs(`${LIBC}
const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8").trim().split("\\n").map((l) => {
  const f = l.split(" ");
  return { point: f[4], options: f[5] };
});
return mounts.map((m) => {
  let write;
  try {
    if (fs.statSync(m.point).isDirectory()) {
      const probe = m.point.replace(/\\/$/, "") + "/.atrium-probe";
      fs.writeFileSync(probe, "x");
      fs.unlinkSync(probe);
    } else fs.closeSync(fs.openSync(m.point, "a"));
    write = "written";
  } catch (e) { write = e.code; }
  // MS_REMOUNT | MS_BIND without MS_RDONLY: what made the checkout writable before.
  const remount = call(() => libc.symbols.mount(null, cs(m.point), null, 32n | 4096n, null));
  return { ...m, write, remount };
});`);

const syscalls = viaJs(`${LIBC}
const nr = process.arch === "arm64"
  ? { ptrace: 117, bpf: 280, keyctl: 219, perf: 241, initModule: 105 }
  : { ptrace: 101, bpf: 321, keyctl: 250, perf: 298, initModule: 175 };
return {
  mountTmpfs: call(() => libc.symbols.mount(cs("none"), cs("/scratch"), cs("tmpfs"), 0n, null)),
  unshareUser: call(() => libc.symbols.unshare(0x10000000)),
  unshareMount: call(() => libc.symbols.unshare(0x20000)),
  setns: call(() => libc.symbols.setns(0, 0)),
  ptrace: call(() => libc.symbols.syscall(nr.ptrace, 0, 0, 0, 0, 0)),
  bpf: call(() => libc.symbols.syscall(nr.bpf, 5, 0, 0, 0, 0)),
  keyctl: call(() => libc.symbols.syscall(nr.keyctl, 0, -3, 0, 0, 0)),
  perfEventOpen: call(() => libc.symbols.syscall(nr.perf, 0, 0, -1, -1, 0)),
  initModule: call(() => libc.symbols.syscall(nr.initModule, 0, 0, 0, 0, 0)),
};`);

/** A C function that forks up to n children, each of which exits by itself after 30 s. */
const FORKS = `int fork(void); void _exit(int); unsigned alarm(unsigned); int pause(void); int *__errno_location(void);
int forks(int n) { int ok = 0; for (int i = 0; i < n; i++) { int p = fork(); if (p == 0) { alarm(30); pause(); _exit(0); } if (p < 0) return -(*__errno_location()) * 100000 - ok; ok++; } return ok; }`;

const fork = viaJs(`const fs = process.getBuiltinModule("fs");
const ffi = process.getBuiltinModule("bun:ffi");
fs.writeFileSync("/scratch/forks.c", ${JSON.stringify(FORKS)});
const lib = ffi.cc({ source: "/scratch/forks.c", symbols: { forks: { args: ["i32"], returns: "i32" } } });
const r = lib.symbols.forks(${DEFAULT_LIMITS.processes + 64});
return r < 0 ? { forked: -r % 100000, errno: Math.floor(-r / 100000) } : { forked: r, errno: 0 };`);

const allocate = viaJs(
  `try { return new ArrayBuffer(8 * 2 ** 30).byteLength; } catch (e) { return "refused: " + e.message; }`,
);
// pyodide's heap is 32-bit: Python cannot even name 8 GiB in one object (limits.test.ts fills memory).
const allocatePython =
  "try:\n    b = bytearray(8 * 2**30)\n    print(len(b))\nexcept (MemoryError, OverflowError) as e:\n    print('refused:', type(e).__name__)";

const fill = viaJs(`const fs = process.getBuiltinModule("fs");
const mib = Buffer.alloc(1 << 20, 1);
const out = {};
for (const dir of ["/scratch", "/dev/shm", "/tmp"]) {
  let bytes = 0, error = null, small = 0;
  try { for (let i = 0; i < 100000; i++) { fs.writeFileSync(dir + "/fill-" + i, mib); bytes += mib.length; } }
  catch (e) { error = e.code; }
  try { for (; small < 5000; small++) fs.writeFileSync(dir + "/s-" + small, "x"); } catch (e) {}
  out[dir] = { bytes, error, small };
}
return out;`);

const sysctl = viaJs(`const fs = process.getBuiltinModule("fs");
const out = {};
for (const f of ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness", "/proc/sysrq-trigger"]) {
  try { fs.writeFileSync(f, fs.existsSync(f) ? fs.readFileSync(f) : "x"); out[f] = "written"; } catch (e) { out[f] = e.code; }
}
return out;`);

function secrets(dataDir: string) {
  return viaJs(`const fs = process.getBuiltinModule("fs");
const environ = {};
for (const p of fs.readdirSync("/proc").filter((x) => /^\\d+$/.test(x))) {
  try { environ[p] = fs.readFileSync("/proc/" + p + "/environ", "latin1"); } catch (e) { environ[p] = e.code; }
}
const reads = {};
for (const f of ${JSON.stringify([
    join(dataDir, "app.db"),
    join(dataDir, "secret.txt"),
    dataDir,
    join(REPO_ROOT, ".env"),
    join(REPO_ROOT, ".git"),
    "/root",
    "/home",
    "/etc",
    "/proc/1/root/etc",
  ])}) {
  try { reads[f] = fs.statSync(f).isDirectory() ? fs.readdirSync(f) : fs.readFileSync(f, "utf8"); } catch (e) { reads[f] = e.code; }
}
return { environ, reads, env: process.env };`);
}

test("model code as native code in a root-started jail: every escape is refused, the checkout unchanged", async () => {
  expect(process.getuid?.()).toBe(0);
  expect(detectSandbox().report).toMatchObject({ isolation: "bubblewrap", capabilities: "dropped" });
  const before = checkoutHash();
  const corePattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
  const blocks = [binds, syscalls, fork, allocate, allocatePython, fill, sysctl, secrets(t.dataDir)];
  const session = await createSession(t);
  const { events } = await runTurn(t, session, {
    text: blocks.map((b) => `\`\`\`python\n${b}\n\`\`\``).join("\n"),
  });
  const outputs = events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output as string);
  expect(outputs).toHaveLength(blocks.length);
  const [mounts, calls, forked, buffer, bytearray, filled, sysctls, found] = outputs;

  // Every mount: no remount; the read-only ones take no write; only the jail's own tmpfs and
  // device nodes take one.
  const seen = JSON.parse(mounts as string) as {
    point: string;
    options: string;
    write: string;
    remount: unknown;
  }[];
  expect(seen.map((m) => m.point)).toEqual(expect.arrayContaining([join(REPO_ROOT, "server"), "/scratch"]));
  for (const m of seen) {
    expect({ point: m.point, remount: m.remount }).toEqual({ point: m.point, remount: 1 });
    if (m.options.split(",").includes("ro"))
      expect({ point: m.point, write: m.write }).not.toMatchObject({ write: "written" });
  }
  const writable = seen.filter((m) => m.write === "written").map((m) => m.point);
  const jailOwn = [
    "/scratch",
    "/tmp",
    "/dev/shm",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
  ];
  for (const point of writable) expect(jailOwn).toContain(point);

  // The system calls that administer the machine fail with EPERM (the seccomp filter; no capability).
  const refused = JSON.parse(calls as string) as Record<string, unknown>;
  for (const [name, result] of Object.entries(refused)) expect({ name, result }).toEqual({ name, result: 1 });

  // Forking stops at the sandbox's process bound, with EAGAIN.
  const forks = JSON.parse(forked as string) as { forked: number; errno: number };
  expect(forks.errno).toBe(11);
  expect(forks.forked).toBeLessThan(DEFAULT_LIMITS.processes);

  expect(JSON.parse(buffer as string)).toStartWith("refused");
  expect(bytearray).toStartWith("refused:");

  // Each tmpfs holds at most its size.
  const fills = JSON.parse(filled as string) as Record<string, { bytes: number; error: string }>;
  for (const dir of ["/scratch", "/dev/shm", "/tmp"]) {
    expect(fills[dir]?.error).toBe("ENOSPC");
    expect(fills[dir]?.bytes).toBeLessThanOrEqual(DEFAULT_LIMITS.scratchBytes);
  }

  for (const result of Object.values(JSON.parse(sysctls as string) as Record<string, string>))
    expect(["EACCES", "EROFS", "ENOENT"]).toContain(result);
  expect(readFileSync("/proc/sys/kernel/core_pattern", "utf8")).toBe(corePattern);

  // Secrets: no environment but the jail's own working dir, nothing of the data dir or .env.
  const loot = JSON.parse(found as string) as {
    environ: Record<string, string>;
    reads: Record<string, unknown>;
    env: Record<string, string>;
  };
  expect(found).not.toContain(CANARY);
  expect(found).not.toContain("ATRIUM_JAIL_CANARY");
  for (const environ of Object.values(loot.environ)) expect(["", "PWD=/scratch\u0000"]).toContain(environ);
  for (const path of [
    join(t.dataDir, "app.db"),
    join(t.dataDir, "secret.txt"),
    t.dataDir,
    join(REPO_ROOT, ".env"),
  ])
    expect(loot.reads[path]).toBe("ENOENT");
  expect(loot.reads["/root"]).toBe("ENOENT");
  expect(Object.keys(loot.env)).toEqual(["PWD"]);

  expect(checkoutHash()).toBe(before);
});
