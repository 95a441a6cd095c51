/**
 * A seccomp filter for every sandbox: the system calls that administer the machine or cross a process
 * boundary fail with EPERM (mount and friends, ptrace, bpf, keyrings, namespaces, kernel modules,
 * ...), and so do io_uring and netlink and vsock sockets; reserving disk space past a file's end fails
 * with EOPNOTSUPP; everything else is allowed. Capabilities are
 * already dropped, so most of these should fail anyway; the filter takes the kernel's own code for them
 * out of reach as well. io_uring and those sockets need no capability at all: only the filter stops them.
 *
 * libseccomp (Debian's libseccomp2) compiles the filter, through bun:ffi: it knows each architecture's
 * numbers and makes a foreign-architecture call (x32, i386 from a 64-bit process) kill the process. The
 * compiled program is written to a file in a folder private to this uid; bubblewrap loads it (`--seccomp FD`)
 * into the sandbox as its last step before exec. Where libseccomp is missing the jail runs without it and
 * /health/ready says so.
 */
import { createHash } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const DENIED = [
  // File system administration: a remount is how a root-started jail was broken before.
  "mount",
  "umount",
  "umount2",
  "pivot_root",
  "chroot",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "move_mount",
  "open_tree",
  "mount_setattr",
  "swapon",
  "swapoff",
  "quotactl",
  "open_by_handle_at",
  "name_to_handle_at",
  // Other processes and the kernel itself.
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  // Taking another process's descriptor (a long-lived sandbox's runner holds its channel to the host).
  "pidfd_getfd",
  "kcmp",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "keyctl",
  "add_key",
  "request_key",
  "unshare",
  "setns",
  "init_module",
  "finit_module",
  "delete_module",
  "kexec_load",
  "kexec_file_load",
  "reboot",
  "acct",
  "syslog",
  "iopl",
  "ioperm",
  "settimeofday",
  "clock_settime",
  "clock_adjtime",
  "adjtimex",
  "vhangup",
  // io_uring runs its work in kernel threads that other filters never see, and has been the way in for
  // a long line of kernel exploits; nothing a sandbox runs needs it (every runtime falls back to epoll).
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
];

/**
 * Socket families refused (socket(2)'s first argument): netlink talks to the kernel's network, audit and
 * uevent subsystems (the jail's own network is set up by pasta, which runs outside the jail), vsock to
 * the hypervisor and its other guests. glibc's getaddrinfo falls back when netlink is refused.
 */
const DENIED_SOCKET_FAMILIES = { AF_NETLINK: 16, AF_VSOCK: 40 } as const;

/**
 * Disk space taken without growing a file. `fallocate` with FALLOC_FL_KEEP_SIZE (1) reserves blocks
 * past the end of a file: RLIMIT_FSIZE is not checked (the size does not change) and it takes one system
 * call, so `fallocate -n -l 80G f` filled the host's disk before the workspace quota's watchdog could
 * look, and its walk counts sizes, so it never saw the space at all. Refused with EOPNOTSUPP, which
 * callers already treat as "this filesystem cannot", except with FALLOC_FL_PUNCH_HOLE (2), which only
 * frees space (mode & 3 == 1 is refused). XFS's older ioctls reserve space the same way (XFS_IOC_RESVSP,
 * RESVSP64, ALLOCSP, ALLOCSP64 and their inverses, ZERO_RANGE: `_IOW('X', n, struct xfs_flock64)`).
 */
const SPACE_RULES: { syscall: string; arg: number; mask: number; value: number }[] = [
  { syscall: "fallocate", arg: 1, mask: 0x3, value: 0x1 },
  ...[10, 11, 36, 37, 40, 41, 42, 43, 57].map((nr) => ({
    syscall: "ioctl",
    arg: 1,
    mask: 0xffffffff,
    value: 0x40305800 | nr,
  })),
];

const SCMP_ACT_ALLOW = 0x7fff0000;
const SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1;
const SCMP_ACT_ERRNO_EOPNOTSUPP = 0x00050000 | 95;

let compiled: { path: string } | null | undefined;

/**
 * A folder only this uid can use, stable across runs: a server killed with SIGKILL leaves nothing new
 * behind (the filter's file is named after its content and written once). Anything else found at that
 * path (another owner, a symlink, open permissions) is not used.
 */
function privateDir(): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `atrium-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {}
  try {
    const stat = lstatSync(dir);
    if (stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0) return dir;
  } catch {}
  return undefined;
}

/** The compiled filter's file, or undefined when libseccomp is not available here. Built once. */
export function seccompFilterFile(): string | undefined {
  if (compiled !== undefined) return compiled?.path;
  compiled = null;
  if (process.platform !== "linux") return undefined;
  const dir = privateDir();
  if (!dir) return undefined;
  try {
    const temp = join(dir, `seccomp.${process.pid}.tmp`);
    if (compile(temp)) {
      const bytes = readFileSync(temp);
      const path = join(dir, `seccomp-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}.bpf`);
      renameSync(temp, path);
      compiled = { path };
    } else rmSync(temp, { force: true });
  } catch {
    compiled = null;
  }
  return compiled?.path;
}

/** The names the filter refuses (tests check each one). */
export const DENIED_SYSCALLS: readonly string[] = DENIED;
export const DENIED_SOCKETS: Readonly<Record<string, number>> = DENIED_SOCKET_FAMILIES;

const SCMP_CMP_MASKED_EQ = 7;

/**
 * One `struct scmp_arg_cmp` (arg, op, datum_a, datum_b: 24 bytes): argument `arg` masked to its low 32
 * bits equals `value`. The mask matters: the kernel reads an `int` argument's low half only, so a
 * caller setting the high bits would slip past a plain 64-bit comparison.
 */
function lowHalfEquals(arg: number, value: number, mask = 0xffffffff): Buffer {
  const cmp = Buffer.alloc(24);
  cmp.writeUInt32LE(arg, 0);
  cmp.writeUInt32LE(SCMP_CMP_MASKED_EQ, 4);
  cmp.writeBigUInt64LE(BigInt(mask), 8);
  cmp.writeBigUInt64LE(BigInt(value), 16);
  return cmp;
}

function compile(path: string): boolean {
  // Loaded lazily: bun:ffi is only needed on Linux, and only here.
  const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
  let lib: ReturnType<typeof open>;
  function open() {
    return dlopen("libseccomp.so.2", {
      seccomp_init: { args: [FFIType.u32], returns: FFIType.ptr },
      seccomp_syscall_resolve_name: { args: [FFIType.cstring], returns: FFIType.i32 },
      // The array form, not the variadic seccomp_rule_add: an FFI call must not be variadic.
      seccomp_rule_add_array: {
        args: [FFIType.ptr, FFIType.u32, FFIType.i32, FFIType.u32, FFIType.ptr],
        returns: FFIType.i32,
      },
      seccomp_export_bpf: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
      seccomp_release: { args: [FFIType.ptr], returns: FFIType.void },
    });
  }
  try {
    lib = open();
  } catch {
    return false;
  }
  const s = lib.symbols;
  const ctx = s.seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  try {
    for (const name of DENIED) {
      const nr = s.seccomp_syscall_resolve_name(Buffer.from(`${name}\0`));
      // A name this architecture lacks (umount on x86_64, iopl on arm64) is skipped.
      if (nr < 0) continue;
      if (s.seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO_EPERM, nr, 0, null) !== 0) return false;
    }
    const socket = s.seccomp_syscall_resolve_name(Buffer.from("socket\0"));
    for (const family of Object.values(DENIED_SOCKET_FAMILIES)) {
      const cmp = lowHalfEquals(0, family);
      if (s.seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO_EPERM, socket, 1, cmp) !== 0) return false;
    }
    for (const rule of SPACE_RULES) {
      const nr = s.seccomp_syscall_resolve_name(Buffer.from(`${rule.syscall}\0`));
      const cmp = lowHalfEquals(rule.arg, rule.value, rule.mask);
      if (s.seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO_EOPNOTSUPP, nr, 1, cmp) !== 0) return false;
    }
    const fd = openSync(path, "w", 0o600);
    try {
      return s.seccomp_export_bpf(ctx, fd) === 0;
    } finally {
      closeSync(fd);
    }
  } finally {
    s.seccomp_release(ctx);
    lib.close();
  }
}
