/**
 * A throwaway PostgreSQL for the tests: one cluster per test run (started on first use, in a temp dir, on
 * a free loopback port, stopped when the run ends: tests/helpers/preload.ts), a template database, and a
 * fresh database per caller copied from the template (`CREATE DATABASE … TEMPLATE`, ~0.2 s).
 *
 * Debian's PostgreSQL lives in /usr/lib/postgresql/<major>/bin, off PATH (the newest installed major is used); `initdb` refuses root, so the
 * cluster's programs run as the `postgres` user (`runuser`), and its folders are that user's. The
 * cluster trades durability for speed (no fsync): a crash of the test machine loses nothing of value.
 *
 * `ATRIUM_TEST_PG_BIN` overrides the programs' folder (another version or distribution).
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";

const BIN = process.env.ATRIUM_TEST_PG_BIN ?? debianBin();

/** The newest major version's programs under /usr/lib/postgresql (15 on Debian 12, 17 on Debian 13). */
function debianBin(): string {
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return join(root, majors[0] ?? "15", "bin");
}
const USER = "atrium";
const TEMPLATE = "atrium_template";

interface Cluster {
  dir: string;
  port: number;
  admin: SQL;
}

let starting: Promise<Cluster> | undefined;
let created = 0;

/** The account the cluster's programs run as (uid and gid of `postgres`). */
function postgresIds(): { uid: number; gid: number } {
  const out = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
  const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
  if (!/^\d+$/.test(out) || !/^\d+$/.test(gid)) {
    throw new Error("PostgreSQL tests need the `postgres` user (apt-get install postgresql)");
  }
  return { uid: Number(out), gid: Number(gid) };
}

/** Runs one of the cluster's programs as `postgres`; throws with its output when it fails. */
function asPostgres(args: string[]): void {
  const run = Bun.spawnSync(["runuser", "-u", "postgres", "--", ...args], { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) {
    throw new Error(`${args[0]} failed (${run.exitCode}): ${run.stderr.toString()}${run.stdout.toString()}`);
  }
}

/** A loopback port nobody listens on now (the cluster binds it a moment later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

async function startCluster(): Promise<Cluster> {
  const { uid, gid } = postgresIds();
  const dir = mkdtempSync(join(tmpdir(), "atrium-pg-"));
  chownSync(dir, uid, gid);
  const data = join(dir, "data");
  const sock = join(dir, "sock");
  mkdirSync(sock);
  chownSync(sock, uid, gid);
  // C.UTF-8 compares like SQLite's BINARY collation, so ORDER BY on text agrees across engines.
  asPostgres([
    `${BIN}/initdb`,
    "-D",
    data,
    "-U",
    USER,
    "--auth=trust",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
    "-N",
  ]);
  const port = await freePort();
  const options = [
    "-c listen_addresses=127.0.0.1",
    `-p ${port}`,
    `-c unix_socket_directories=${sock}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  asPostgres([`${BIN}/pg_ctl`, "-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  // A run that dies without its afterAll (an uncaught error, kill -9) still stops its cluster: a watchdog
  // shell outlives it, sees it gone and stops the cluster.
  process.once("exit", () => {
    if (!stopping.has(dir)) stopSync(dir);
  });
  const watchdog = Bun.spawn(
    [
      "sh",
      "-c",
      'while kill -0 "$1" 2>/dev/null; do sleep 1; done; runuser -u postgres -- "$2/pg_ctl" -D "$3/data" -m immediate stop; rm -rf "$3"',
      "watchdog",
      String(process.pid),
      BIN,
      dir,
    ],
    { stdin: "ignore", stdout: "ignore", stderr: "ignore" },
  );
  watchdog.unref();
  const admin = new SQL({ url: `postgres://${USER}@127.0.0.1:${port}/postgres`, max: 2 });
  await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`);
  return { dir, port, admin };
}

/** Clusters whose stop is under way in a shell of its own (the exit handler leaves them to it). */
const stopping = new Set<string>();

/**
 * Stops the cluster and removes its folder in a detached shell, so the run's last hook returns at once:
 * at the end of a whole run the folder holds hundreds of databases, and removing it on a loaded machine
 * outlasted the hook's time (the PostgreSQL half's last "test" failed on that alone).
 */
function stopDetached(dir: string): void {
  stopping.add(dir);
  const pgctl = `runuser -u postgres -- ${BIN}/pg_ctl -D '${join(dir, "data")}' -m immediate stop`;
  const shell = Bun.spawn(["setsid", "sh", "-c", `${pgctl} >/dev/null 2>&1; rm -rf '${dir}'`], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  shell.unref();
}

function stopSync(dir: string): void {
  Bun.spawnSync(
    ["runuser", "-u", "postgres", "--", `${BIN}/pg_ctl`, "-D", join(dir, "data"), "-m", "immediate", "stop"],
    {
      stdout: "ignore",
      stderr: "ignore",
    },
  );
  rmSync(dir, { recursive: true, force: true });
}

function cluster(): Promise<Cluster> {
  starting ??= startCluster();
  return starting;
}

/**
 * The URL of a new, empty database on the run's cluster (copied from the template database), for one
 * test file or one test. Nothing else uses it; the cluster, and with it every database, goes at the end.
 */
export async function freshPostgresDatabase(): Promise<string> {
  const c = await cluster();
  const name = `atrium_test_${process.pid}_${++created}`;
  await c.admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
  return `postgres://${USER}@127.0.0.1:${c.port}/${name}`;
}

/** Stops the run's cluster, if one was started (tests/helpers/preload.ts calls this once at the end). */
export async function stopPostgres(): Promise<void> {
  if (!starting) return;
  const c = await starting.catch(() => undefined);
  starting = undefined;
  if (!c) return;
  // The immediate stop ends every connection (the admin's and any a test left open): waiting on the admin
  // pool's close first could outlast the run's hook time at the end of a whole run.
  stopDetached(c.dir);
  await Promise.race([c.admin.close().catch(() => {}), Bun.sleep(1000)]);
}
