/**
 * The host uids sandboxes run as when the server is root (policy `sandbox.uid_base`). Every sandbox
 * gets a uid no other sandbox has at the same time, so a process of one cannot reach another's files or
 * processes through `/proc/<pid>/root`, signals or ptrace checks, and none is `nobody` (65534), which
 * other host daemons use:
 *
 *   uid_base + 0 … uid_base + 4031          turns' interpreters, one per live interpreter (a slot)
 *   uid_base + 4032 … uid_base + 4095       search's document readers (`atrium parse`), one per live
 *                                           process (a slot): they read users' documents
 *   uid_base + 4096 … uid_base + 65535      users' long-lived sandboxes, one per user, recorded in the
 *                                           database (users/uid-store.ts) and kept across restarts
 *
 * The gid is the same number. The range must not hold a uid or gid the host knows (/etc/passwd,
 * /etc/group) nor overlap a subordinate range (/etc/subuid, /etc/subgid, used by rootless containers):
 * checkUidRange says which, and nothing runs as a uid of an overlapping range.
 */
import { readFileSync } from "node:fs";

/** uids in the range: 64 Ki, the size of one subordinate range. */
export const UID_RANGE_SIZE = 65_536;
/** The first slots of the range go to turns' interpreters (policy max_interpreters is at most 1024). */
export const INTERPRETER_UIDS = 4032;
/** Then one slot per live document reader (policy search.read_parallel is at most 64). */
export const PARSER_UIDS = 64;
/** Users' uids start here, after both (never moved: users' indexes are recorded). */
export const USERS_FROM = 4096;
/** Above the defaults of shadow's subordinate ranges (100000 … 600100000) and systemd's container
 * ranges (524288 … 1879048191), below 2^31 (some programs still read a uid as a signed int). */
export const DEFAULT_UID_BASE = 1_900_000_000;

/** The uid of interpreter slot `slot` (0 … INTERPRETER_UIDS − 1). */
export function interpreterUid(base: number, slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= INTERPRETER_UIDS) throw new RangeError("no such slot");
  return base + slot;
}

/** The uid of document reader slot `slot` (0 … PARSER_UIDS − 1). */
export function parserUid(base: number, slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= PARSER_UIDS) throw new RangeError("no such slot");
  return base + INTERPRETER_UIDS + slot;
}

/** How many users can have a uid of their own. */
export const USER_UIDS = UID_RANGE_SIZE - USERS_FROM;

/** The uid of the user with index `index` (0 … USER_UIDS − 1). */
export function userUid(base: number, index: number): number {
  if (!Number.isInteger(index) || index < 0 || index >= USER_UIDS) throw new RangeError("no such index");
  return base + USERS_FROM + index;
}

export interface HostIdFiles {
  passwd: string;
  group: string;
  subuid: string;
  subgid: string;
}

const HOST_FILES: HostIdFiles = {
  passwd: "/etc/passwd",
  group: "/etc/group",
  subuid: "/etc/subuid",
  subgid: "/etc/subgid",
};

function lines(path: string): string[][] {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))
      .map((l) => l.split(":"));
  } catch {
    return [];
  }
}

const checked = new Map<string, string | undefined>();

/**
 * Why `[base, base + 65536)` cannot be the sandboxes' uids on this host, or undefined when it can: an
 * account or group with an id inside it, or a subordinate range overlapping it. Checked once per base.
 */
export function checkUidRange(base: number, files: HostIdFiles = HOST_FILES): string | undefined {
  const key = `${base}:${JSON.stringify(files)}`;
  if (checked.has(key)) return checked.get(key);
  const end = base + UID_RANGE_SIZE;
  const inside = (id: number) => id >= base && id < end;
  let problem: string | undefined;
  for (const [kind, path] of [
    ["user", files.passwd],
    ["group", files.group],
  ] as const) {
    const hit = lines(path).find((f) => inside(Number(f[2])));
    if (hit && !problem) problem = `the ${kind} ${hit[0]} (${hit[2]}) in ${path}`;
  }
  for (const path of [files.subuid, files.subgid]) {
    const hit = lines(path).find((f) => {
      const [from, count] = [Number(f[1]), Number(f[2])];
      return Number.isFinite(from) && Number.isFinite(count) && from < end && from + count > base;
    });
    if (hit && !problem) problem = `the subordinate range of ${hit[0]} (${hit[1]}, ${hit[2]} ids) in ${path}`;
  }
  const message =
    problem &&
    `policy sandbox.uid_base = ${base}: the sandboxes' uids ${base}…${end - 1} overlap ${problem}; choose a base whose 65536 ids this host does not use`;
  checked.set(key, message);
  return message;
}

/** Throws checkUidRange's reason. */
export function assertUidRange(base: number): void {
  const problem = checkUidRange(base);
  if (problem) throw new Error(problem);
}
