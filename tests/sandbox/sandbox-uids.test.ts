/**
 * A root server runs every sandbox as a host uid of its own (server/sandbox/uids.ts), never the shared
 * `nobody`: each user's long-lived sandbox as the uid recorded for them (the same after a restart), each
 * live interpreter and each document reader (search's parse subprocess) as its slot's. A process of one user's uid cannot read another user's workspace, not
 * through /proc/<pid>/root of their running sandbox (the way a shared uid let any such process in) and
 * not through the data dir; the owner's own uid can, which is what a shared uid handed to everyone.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import {
  checkUidRange,
  DEFAULT_UID_BASE,
  INTERPRETER_UIDS,
  PARSER_UIDS,
  UID_RANGE_SIZE,
  USERS_FROM,
} from "../../server/sandbox/uids.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { SandboxUidStore } from "../../server/sandbox/users/uid-store.ts";
import { DEFAULT_PARSE_LIMITS, DocumentParser } from "../../server/search/indexing/parser.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { descendants, hostUid, runIn } from "../helpers/jail.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(120_000);

const dir = tempDir();
const dataDir = join(dir.path, "data");
const open: { db: Database; provider: LocalSandboxProvider }[] = [];
afterAll(async () => {
  for (const { db, provider } of open) {
    await provider.close();
    db.close();
  }
  dir.remove();
});

/** A provider over the database file, as a server (re)started on the data dir has. */
function start(): { db: Database; provider: LocalSandboxProvider } {
  const db = new Database(join(dir.path, "app.db"));
  migrate(db, [sandboxMigrations]);
  const opened = { db, provider: new LocalSandboxProvider(sqlitePort(db), { dataDir }) };
  open.push(opened);
  return opened;
}

/** The host pid of the command runner inside the owner's jail. */
function runnerPid(provider: LocalSandboxProvider, owner: string): number {
  const jail = provider.jailPid(owner) as number;
  const runner = descendants(jail).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("runner");
    } catch {
      return false;
    }
  });
  expect(runner).toBeNumber();
  return runner as number;
}

/** Runs argv on the host as `uid` (setpriv, no groups); its exit code and output. */
function asUid(uid: number, argv: string[]) {
  const setpriv = Bun.which("setpriv") as string;
  const run = Bun.spawnSync([setpriv, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv], {
    env: {},
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() };
}

const USERS_FIRST = DEFAULT_UID_BASE + USERS_FROM;
const RANGE_END = DEFAULT_UID_BASE + UID_RANGE_SIZE;

describe("users' long-lived sandboxes", () => {
  test("two users' sandboxes run as different host uids, each recorded, the same after a restart", async () => {
    expect(process.getuid?.()).toBe(0);
    const first = start();
    for (const owner of ["ann", "bob"]) {
      const { exitCode } = await runIn(
        first.provider,
        owner,
        `echo "secret of ${owner}" > secret.txt; id -u`,
      );
      expect(exitCode).toBe(0);
    }
    const ann = (await first.provider.hostUid("ann")) as number;
    const bob = (await first.provider.hostUid("bob")) as number;
    expect(ann).not.toBe(bob);
    for (const uid of [ann, bob]) {
      expect(uid).toBeGreaterThanOrEqual(USERS_FIRST);
      expect(uid).toBeLessThan(RANGE_END);
    }
    // The processes, and the workspace they write, are that uid's on the host.
    for (const [owner, uid] of [
      ["ann", ann],
      ["bob", bob],
    ] as const) {
      expect(hostUid(runnerPid(first.provider, owner))).toBe(uid);
      const workspace = ownerFolders(dataDir, owner).workspace;
      expect(statSync(workspace).uid).toBe(uid);
      expect(statSync(join(workspace, "secret.txt")).uid).toBe(uid);
    }
    const rows = first.db.query("SELECT owner_id, uid_index FROM sandbox_uids ORDER BY owner_id").all();
    expect(rows).toEqual([
      { owner_id: "ann", uid_index: ann - USERS_FIRST },
      { owner_id: "bob", uid_index: bob - USERS_FIRST },
    ]);

    await first.provider.close();
    first.db.close();
    open.splice(open.indexOf(first), 1);
    // A restart: a new provider on the same database; Bob starts first this time.
    const second = start();
    await runIn(second.provider, "bob", "true");
    await runIn(second.provider, "ann", "true");
    expect(await second.provider.hostUid("ann")).toBe(ann);
    expect(await second.provider.hostUid("bob")).toBe(bob);
    expect(hostUid(runnerPid(second.provider, "bob"))).toBe(bob);
  });

  test("a process of one user's uid cannot read another's workspace, through /proc/<pid>/root or the data dir", async () => {
    const { provider } = open.at(-1) as { provider: LocalSandboxProvider };
    const ann = (await provider.hostUid("ann")) as number;
    const bob = (await provider.hostUid("bob")) as number;
    const bobRunner = runnerPid(provider, "bob");
    const throughProc = `/proc/${bobRunner}/root/home/atrium/agent-workspace/secret.txt`;
    const onDisk = join(ownerFolders(dataDir, "bob").workspace, "secret.txt");

    const stolen = asUid(ann, ["cat", throughProc]);
    expect(stolen.code).not.toBe(0);
    expect(stolen.out).toBe("");
    expect(stolen.err).toContain("Permission denied");
    const direct = asUid(ann, ["cat", onDisk]);
    expect(direct.code).not.toBe(0);
    expect(direct.out).toBe("");
    // Nor can it signal Bob's processes.
    expect(asUid(ann, ["kill", "-0", String(bobRunner)]).code).not.toBe(0);

    // The door is real: a process of Bob's own uid goes through it. Under a uid shared by every
    // sandbox (and by other host daemons), that was any of them.
    expect(asUid(bob, ["cat", throughProc])).toMatchObject({ code: 0, out: "secret of bob\n" });
  });
});

describe("turns' interpreters", () => {
  test("two live interpreters run as different uids of the interpreters' part of the range", async () => {
    const pool = new InterpreterPool({ warm: 0, max: 2 });
    try {
      const interpreters = await Promise.all([
        pool.acquire({ owner: "ann" }),
        pool.acquire({ owner: "bob" }),
      ]);
      const uids = interpreters.map((interpreter) => {
        const inner = descendants(interpreter.pid).find((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("sandbox"),
        ) as number;
        return hostUid(inner);
      });
      expect(uids[0]).not.toBe(uids[1]);
      for (const uid of uids) {
        expect(uid).toBeGreaterThanOrEqual(DEFAULT_UID_BASE);
        expect(uid).toBeLessThan(DEFAULT_UID_BASE + INTERPRETER_UIDS);
      }
      for (const interpreter of interpreters) pool.release(interpreter);
    } finally {
      pool.close();
    }
  }, 60_000);
});

describe("search's document readers", () => {
  test("two documents read at once run as two uids of the readers' part of the range, never nobody", async () => {
    // HTML nested deep enough to keep each reader busy until its time limit, so its process can be seen.
    const deep = new TextEncoder().encode(`${"<div>".repeat(300_000)}x${"</div>".repeat(300_000)}`);
    const parser = new DocumentParser({ ...DEFAULT_PARSE_LIMITS, timeoutMs: 8_000, parallel: 2 });
    const readers = () =>
      descendants(process.pid).filter((pid) => {
        try {
          const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
          return argv.includes("parse") && !argv.some((a) => a.endsWith("bwrap"));
        } catch {
          return false;
        }
      });
    try {
      const parsing = [parser.parse("html", deep, "ann"), parser.parse("html", deep, "bob")];
      const seen = new Set<number>();
      await waitFor(
        () => {
          for (const pid of readers()) {
            try {
              seen.add(hostUid(pid));
            } catch {}
          }
          return seen.size >= 2;
        },
        { what: "both readers to run" },
      );
      expect(seen.has(65534)).toBe(false);
      expect(seen.size).toBe(2);
      for (const uid of seen) {
        expect(uid).toBeGreaterThanOrEqual(DEFAULT_UID_BASE + INTERPRETER_UIDS);
        expect(uid).toBeLessThan(DEFAULT_UID_BASE + INTERPRETER_UIDS + PARSER_UIDS);
      }
      await Promise.all(parsing);
    } finally {
      parser.close();
    }
  });
});

describe("the range", () => {
  test("a range holding a host account, group or subordinate range is refused, naming the policy key", () => {
    const files = (passwd: string, group: string, subuid: string, subgid: string) => {
      const paths = { passwd, group, subuid, subgid };
      for (const [name, text] of Object.entries(paths)) writeFileSync(join(dir.path, name), text);
      return {
        passwd: join(dir.path, "passwd"),
        group: join(dir.path, "group"),
        subuid: join(dir.path, "subuid"),
        subgid: join(dir.path, "subgid"),
      };
    };
    const base = 300_000;
    expect(checkUidRange(base, files("root:x:0:0::/root:/bin/sh\n", "root:x:0:\n", "", ""))).toBeUndefined();
    expect(checkUidRange(base + 1, files(`svc:x:${base + 70}:1::/:/bin/false\n`, "", "", ""))).toBe(
      `policy sandbox.uid_base = ${base + 1}: the sandboxes' uids ${base + 1}…${base + 65536} overlap the user svc (${base + 70}) in ${join(dir.path, "passwd")}; choose a base whose 65536 ids this host does not use`,
    );
    expect(checkUidRange(base + 2, files("", `grp:x:${base + 65537}:\n`, "", ""))).toContain("the group grp");
    // A rootless-container range that starts below the base and reaches into it.
    expect(checkUidRange(base + 3, files("", "", "", `dev:${base - 10}:65536\n`))).toContain(
      `the subordinate range of dev (${base - 10}, 65536 ids)`,
    );
    expect(checkUidRange(base + 4, files("", "", `dev:${base + 4 + 65536}:65536\n`, ""))).toBeUndefined();
    // The default range is clear on this host (the check every root server runs before using it).
    expect(checkUidRange(DEFAULT_UID_BASE)).toBeUndefined();
  });

  test("uid indexes go up; a deleted user's is handed out again only once the range was used up", async () => {
    const db = new Database(":memory:");
    migrate(db, [sandboxMigrations]);
    const uids = new SandboxUidStore(sqlitePort(db));
    expect([await uids.allocate("a", 3), await uids.allocate("b", 3), await uids.allocate("a", 3)]).toEqual([
      0, 1, 0,
    ]);
    db.run("DELETE FROM sandbox_uids WHERE owner_id = 'a'");
    expect(await uids.allocate("c", 3)).toBe(2);
    expect(await uids.allocate("d", 3)).toBe(0);
    await expect(uids.allocate("e", 3)).rejects.toThrow("every one of the 3 sandbox uids is taken");
    expect(await uids.indexOf("e")).toBeUndefined();
    db.close();
  });
});
