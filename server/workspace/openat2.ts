/**
 * Linux `openat2(2)` and the `*at` calls around it, through bun:ffi on glibc (server/workspace/beneath.ts
 * uses them). Older glibc (Debian 12 ships 2.36) has no openat2 wrapper, so it is `syscall(437, ...)`:
 * the same number on x86_64 and arm64. Loaded lazily and probed once; unavailable (not Linux, a kernel before 5.6, a seccomp
 * filter refusing it) means `load()` answers null and the log says so once.
 */
import { closeSync, constants } from "node:fs";
import { constants as osConstants } from "node:os";

export const SYS_openat2 = 437; // the same number on x86_64 and arm64 (asm-generic)
const RESOLVE_NO_MAGICLINKS = 0x02;
const RESOLVE_NO_SYMLINKS = 0x04;
const RESOLVE_BENEATH = 0x08;
export const RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
export const O_PATH = 0o10000000; // x86_64 and arm64 agree; node does not export it
const O_CLOEXEC = 0o2000000;
export const AT_REMOVEDIR = 0x200;

export interface Libc {
  syscall: (nr: number, dirfd: number, path: Buffer, how: Buffer, size: number) => number;
  mkdirat: (dirfd: number, path: Buffer, mode: number) => number;
  renameat: (olddir: number, oldpath: Buffer, newdir: number, newpath: Buffer) => number;
  unlinkat: (dirfd: number, path: Buffer, flags: number) => number;
  readlinkat: (dirfd: number, path: Buffer, buffer: Buffer, size: number) => number;
  errno: () => number;
}

let libc: Libc | null | undefined;
let fallbackLogged = false;

export function load(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform === "linux") {
    try {
      libc = bind();
      // A probe: the kernel (>= 5.6) and any seccomp filter must both let openat2 through.
      const fd = openat2Raw(libc, -100 /* AT_FDCWD */, "/", O_PATH | constants.O_DIRECTORY, 0, 0);
      if (fd < 0) throw new Error(`errno ${libc.errno()}`);
      closeSync(fd);
    } catch (error) {
      libc = null;
      if (!fallbackLogged) {
        fallbackLogged = true;
        console.warn(
          `openat2 is not available (${(error as Error).message}); workspace files use checked paths`,
        );
      }
    }
  } else if (!fallbackLogged) {
    fallbackLogged = true;
    console.warn(`openat2 is not available on ${process.platform}; workspace files use checked paths`);
  }
  return libc;
}

function bind(): Libc {
  // Loaded lazily: bun:ffi is only needed on Linux, and only here.
  const { dlopen, FFIType, read } = require("bun:ffi") as typeof import("bun:ffi");
  const lib = dlopen("libc.so.6", {
    // syscall(2) is variadic; with integer and pointer arguments only, x86_64 and arm64 Linux pass them
    // exactly as for a fixed signature, which is what FFI calls with.
    syscall: {
      args: [FFIType.i64, FFIType.i32, FFIType.ptr, FFIType.ptr, FFIType.u64],
      returns: FFIType.i64,
    },
    mkdirat: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    renameat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    unlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    readlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
    __errno_location: { args: [], returns: FFIType.ptr },
  });
  const s = lib.symbols;
  return {
    syscall: (nr, dirfd, path, how, size) => Number(s.syscall(nr, dirfd, path, how, size)),
    mkdirat: (dirfd, path, mode) => s.mkdirat(dirfd, path, mode),
    renameat: (a, p, b, q) => s.renameat(a, p, b, q),
    unlinkat: (dirfd, path, flags) => s.unlinkat(dirfd, path, flags),
    readlinkat: (dirfd, path, buffer, size) => Number(s.readlinkat(dirfd, path, buffer, size)),
    errno: () => read.i32(s.__errno_location() as NonNullable<ReturnType<typeof s.__errno_location>>, 0),
  };
}

export const cstr = (s: string) => Buffer.from(`${s}\0`);

export function openat2Raw(
  c: Libc,
  dirfd: number,
  path: string,
  flags: number,
  mode: number,
  resolve: number,
) {
  const how = Buffer.alloc(24);
  how.writeBigUInt64LE(BigInt(flags | O_CLOEXEC), 0);
  how.writeBigUInt64LE(BigInt(mode), 8);
  how.writeBigUInt64LE(BigInt(resolve), 16);
  return c.syscall(SYS_openat2, dirfd, cstr(path), how, 24);
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));

/** An Error shaped like node's (`code` is the errno name), so callers handle both modes alike. */
export function fail(c: Libc, op: string, path: string): never {
  const errno = c.errno();
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  throw Object.assign(new Error(`${code}: ${op} '${path}'`), { code, errno: -errno, syscall: op, path });
}

export const check = (c: Libc, result: number, op: string, path: string) => {
  if (result < 0) fail(c, op, path);
  return result;
};
