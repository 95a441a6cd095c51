/**
 * Files a sandbox's processes keep on disk without a name: a file opened and then deleted, or made
 * nameless with `O_TMPFILE`, stays on the filesystem for as long as a descriptor or a memory mapping
 * holds it. No walk of the workspace sees it, yet it fills the same disk (the review wrote 384 MiB this
 * way past a 16 MiB quota, the watchdog none the wiser). The quota's watchdog adds what this finds.
 *
 * For each process: its descriptors (`/proc/<pid>/fd`, which the server may read for the jails it
 * started) and its mappings (`/proc/<pid>/map_files`, which only root may follow; otherwise each
 * mapping of a deleted file counts as far as it reaches into the file, from `/proc/<pid>/maps`). Only
 * regular files without a name on the workspace's own filesystem count, each once.
 */
import { readdirSync, readFileSync, type Stats, statSync } from "node:fs";

export interface HeldFiles {
  bytes: number;
  files: number;
}

/** What the processes `pids` hold without a name on the filesystem `device` (see the module comment). */
export function heldWithoutName(pids: number[], device: number): HeldFiles {
  const sizes = new Map<number, number>();
  const count = (stat: Stats | undefined) => {
    if (!stat?.isFile() || stat.nlink !== 0 || stat.dev !== device) return;
    sizes.set(stat.ino, Math.max(stat.size, sizes.get(stat.ino) ?? 0));
  };
  for (const pid of pids) {
    for (const name of list(`/proc/${pid}/fd`)) count(statOf(`/proc/${pid}/fd/${name}`));
    let followed = true;
    for (const name of list(`/proc/${pid}/map_files`)) {
      const stat = statOf(`/proc/${pid}/map_files/${name}`);
      if (stat) count(stat);
      else followed = false;
    }
    if (!followed)
      for (const [ino, reach] of deletedMappings(pid, device)) count(reachStat(ino, reach, device));
  }
  let bytes = 0;
  for (const size of sizes.values()) bytes += size;
  return { bytes, files: sizes.size };
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return []; // the process is gone
  }
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** A stand-in stat for a mapping that could not be followed: the file is at least as large as it reaches. */
function reachStat(ino: number, reach: number, device: number): Stats {
  return { isFile: () => true, nlink: 0, dev: device, ino, size: reach } as Stats;
}

/**
 * Mappings of deleted files on `device` from `/proc/<pid>/maps`, as [inode, how far into the file the
 * mapping reaches]. The device there is `major:minor` in hex; `device` is glibc's encoding of both.
 */
export function deletedMappings(pid: number, device: number): Map<number, number> {
  const found = new Map<number, number>();
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/maps`, "utf8");
  } catch {
    return found;
  }
  for (const line of text.split("\n")) {
    if (!line.endsWith(" (deleted)")) continue;
    const [range, , offset, dev, inode] = line.split(/\s+/);
    const [start, end] = (range ?? "").split("-").map((h) => Number.parseInt(h, 16));
    const [major, minor] = (dev ?? "").split(":").map((h) => Number.parseInt(h, 16));
    const ino = Number(inode);
    if (!ino || start === undefined || end === undefined || major === undefined || minor === undefined)
      continue;
    if (encodeDevice(major, minor) !== device) continue;
    const reach = Number.parseInt(offset ?? "0", 16) + (end - start);
    found.set(ino, Math.max(reach, found.get(ino) ?? 0));
  }
  return found;
}

/** glibc's `makedev`, which is what a stat's `dev` holds. */
function encodeDevice(major: number, minor: number): number {
  return (minor & 0xff) + ((major & 0xfff) << 8) + (minor & ~0xff) * 2 ** 12 + (major & ~0xfff) * 2 ** 32;
}
