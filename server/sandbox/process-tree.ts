/**
 * A sandbox's processes as the host sees them: the pid the server spawned and everything under it, read
 * from /proc. Whatever a jailed process starts stays under it (an orphan is adopted by the jail's own
 * init, bubblewrap, which is under the spawned pid), so this is every process that can still act.
 */
import { readdirSync, readFileSync } from "node:fs";

/** `pid` and its descendants, from /proc (bounded: the jail's own process limit is far below). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length && out.length < 4096; i++) {
    try {
      for (const task of readdirSync(`/proc/${out[i]}/task`)) {
        const children = readFileSync(`/proc/${out[i]}/task/${task}/children`, "utf8").trim();
        if (children) out.push(...children.split(" ").map(Number));
      }
    } catch {}
  }
  return out;
}
