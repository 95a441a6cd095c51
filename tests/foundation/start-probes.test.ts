/**
 * The jail probes on the start path (docs/benchmarks.md, "Cold start"): main.ts starts them as child
 * processes before the server's modules load, and nothing on the way to /health/ready may decide the
 * sandbox synchronously while they run, which would run every probe a second time with `spawnSync` and
 * block the start for their sum. The real server, started as a user starts it, with a `--preload` plugin
 * (tests/fixtures/slow-probes.ts) that makes each background probe start a second late, as on a loaded
 * machine, and records every bubblewrap command. Readiness still reports the jail the probes found, and the
 * first document parse (search's reader, which used to decide the sandbox as the family was created)
 * runs in it. Nothing is timed.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";
import { MAIN, type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { readFrames } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";

const PLUGIN = join(REPO_ROOT, "tests", "fixtures", "slow-probes.ts");
const tmp = tempDir("atrium-start-probes-");
const probesFile = join(tmp.path, "probes");
let server: ServerProcess | undefined;

afterAll(async () => {
  server?.proc.kill("SIGTERM");
  await server?.exited;
  tmp.remove();
});

/** The bubblewrap commands the server ran so far, by how: "sync" or "background". */
function probes(): { sync: string[]; background: string[]; jailed: string[] } {
  const lines = readFileSync(probesFile, "utf8").split("\n").filter(Boolean);
  return {
    sync: lines.filter((l) => l.startsWith("sync ")),
    background: lines.filter((l) => l.startsWith("background ")),
    jailed: lines.filter((l) => l.startsWith("jailed ")),
  };
}

test("slow jail probes run once, in the background: none runs synchronously before ready or at the first parse", async () => {
  writeFileSync(probesFile, "");
  server = await startServerProcess(
    ["--preload", PLUGIN, MAIN, "--port", "0", "--data-dir", join(tmp.path, "data")],
    { binary: process.execPath, env: { ATRIUM_TEST_PROBES: probesFile } },
  );
  await waitForOk(`${server.url}/health/ready`, 60_000);
  const atReady = probes();
  expect(atReady.sync).toEqual([]);
  // The probes did run (the full jail, and the unprivileged one of a root server), and readiness reports
  // what they found: the jail, not "none" for want of an answer.
  expect(atReady.background.length).toBeGreaterThanOrEqual(1);
  const ready = (await (await fetch(`${server.url}/health/ready`)).json()) as {
    sandbox: { isolation: string };
  };
  expect(ready.sandbox.isolation).toBe("bubblewrap");

  // The first parse decides how parses run from the probes' answer, and reads the HTML in the jail.
  const form = new FormData();
  form.set("name", "first");
  form.append(
    "files",
    new File(["<html><body><p>Grace Hopper wrote COBOL.</p></body></html>"], "hopper.html"),
  );
  const upload = await fetch(`${server.url}/search/index/upload`, { method: "POST", body: form });
  expect(upload.status).toBe(200);
  const last = (await readFrames(upload)).at(-1);
  expect(last?.event).toBe("done");
  expect(JSON.parse(last?.data ?? "{}")).toMatchObject({
    index: "first",
    documents: 1,
    documents_indexed: 1,
  });
  const after = probes();
  expect(after.sync).toEqual([]);
  expect(after.background).toEqual(atReady.background);
  expect(after.jailed.some((l) => l.includes(" parse html "))).toBe(true);
}, 120_000);
