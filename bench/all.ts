/** Runs every benchmark in bench/ in turn (npm run bench). */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const files = readdirSync(import.meta.dir)
  .filter((f) => f.endsWith(".ts") && f !== "all.ts")
  .sort();
for (const file of files) {
  console.log(`\n== bench/${file}`);
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, file)], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0) process.exitCode = 1;
}
