/**
 * The seccomp filter refuses io_uring and netlink and vsock sockets in every jail, with EPERM: from a
 * user's long-lived sandbox (python3 and ctypes, as a model's shell command would) and from a turn's
 * interpreter (native calls through pyodide's JavaScript bridge). None of them needs a capability, so
 * without the filter each one works here: netlink sockets open in the jail's own network namespace,
 * io_uring_setup hands out a ring, and vsock opens where the host has it (/dev/vsock on a VM).
 * The family is also tried with the argument's high half set, which the kernel ignores (an `int`): a
 * filter comparing all 64 bits would let that through.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { arch } from "node:os";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { DEFAULT_LIMITS } from "../../server/sandbox/limits.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { runIn, viaJs } from "../helpers/jail.ts";
import { tempDir } from "../helpers/tmp.ts";

setDefaultTimeout(120_000);

/** System call numbers: socket differs, io_uring's are the same on both. */
const NR = arch() === "arm64" ? { socket: 198 } : { socket: 41 };
const IO_URING = { setup: 425, enter: 426, register: 427 };
const EXPECTED = {
  netlink: "EPERM",
  netlinkHighBits: "EPERM",
  vsock: "EPERM",
  ioUringSetup: "EPERM",
  ioUringEnter: "EPERM",
  ioUringRegister: "EPERM",
  // What stays allowed: the sockets a program needs.
  unix: "opened",
  inet: "opened",
};

const PYTHON = `
import ctypes, errno, json, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def name(code): return errno.errorcode.get(code, str(code))
def raw(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return "opened" if r >= 0 else name(ctypes.get_errno())
def sock(family, kind):
    try:
        socket.socket(family, kind, 0).close()
        return "opened"
    except OSError as e:
        return name(e.errno)
params = ctypes.create_string_buffer(120)
print(json.dumps({
  "netlink": sock(socket.AF_NETLINK, socket.SOCK_RAW),
  "netlinkHighBits": raw(${NR.socket}, (1 << 32) | 16, 3, 0),
  "vsock": sock(40, socket.SOCK_STREAM),
  "ioUringSetup": raw(${IO_URING.setup}, 8, params),
  "ioUringEnter": raw(${IO_URING.enter}, -1, 0, 0, 0, 0, 0),
  "ioUringRegister": raw(${IO_URING.register}, -1, 0, 0, 0),
  "unix": sock(socket.AF_UNIX, socket.SOCK_STREAM),
  "inet": sock(socket.AF_INET, socket.SOCK_STREAM),
}))
`;

const BRIDGE = viaJs(`const ffi = process.getBuiltinModule("bun:ffi");
const libc = ffi.dlopen("libc.so.6", {
  syscall: { args: ["i64", "i64", "i64", "i64", "i64", "i64", "i64"], returns: "i64" },
  __errno_location: { args: [], returns: "ptr" },
});
const names = { 1: "EPERM", 9: "EBADF", 13: "EACCES", 22: "EINVAL", 97: "EAFNOSUPPORT" };
const call = (...args) => {
  while (args.length < 7) args.push(0);
  const r = Number(libc.symbols.syscall(...args));
  if (r >= 0) return "opened";
  const e = ffi.read.i32(libc.symbols.__errno_location(), 0);
  return names[e] ?? String(e);
};
const params = new Uint8Array(120);
return {
  netlink: call(${NR.socket}, 16, 3, 0),
  netlinkHighBits: call(${NR.socket}, 0x100000010, 3, 0),
  vsock: call(${NR.socket}, 40, 1, 0),
  ioUringSetup: call(${IO_URING.setup}, 8, ffi.ptr(params)),
  ioUringEnter: call(${IO_URING.enter}, -1, 0, 0, 0, 0, 0),
  ioUringRegister: call(${IO_URING.register}, -1, 0, 0, 0),
  unix: call(${NR.socket}, 1, 1, 0),
  inet: call(${NR.socket}, 2, 1, 0),
};`);

const dir = tempDir();
const db = new Database(":memory:");
let provider: LocalSandboxProvider;
let pool: InterpreterPool;

beforeAll(() => {
  migrate(db, [sandboxMigrations]);
  provider = new LocalSandboxProvider(sqlitePort(db), { dataDir: dir.path, limits: DEFAULT_LIMITS });
  pool = new InterpreterPool({ warm: 0, max: 1 });
});
afterAll(async () => {
  pool.close();
  await provider.close();
  db.close();
  dir.remove();
});

test("a user's sandbox: io_uring, netlink and vsock sockets are refused with EPERM; unix and inet sockets open", async () => {
  const { out, exitCode } = await runIn(provider, "ann", `python3 -c '${PYTHON.replaceAll("'", "'\\''")}'`);
  expect({ exitCode, out }).toMatchObject({ exitCode: 0 });
  expect(JSON.parse(out)).toEqual(EXPECTED);
});

test("a turn's interpreter, through pyodide's JavaScript bridge: the same calls are refused the same way", async () => {
  const interpreter = await pool.acquire();
  try {
    await interpreter.init([], {}, 10_000);
    const result = await interpreter.run(BRIDGE, { timeoutMs: 60_000 });
    expect(result.error).toBeNull();
    expect(JSON.parse(result.stdout)).toEqual(EXPECTED);
  } finally {
    pool.release(interpreter);
  }
});
