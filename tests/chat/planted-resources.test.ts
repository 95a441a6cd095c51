/**
 * What the model is told about a workspace that its sandbox (or, in local mode, the model's own shell)
 * controls. The sandbox plants, under every name pi's resource loader reads (context files, SYSTEM and
 * APPEND_SYSTEM, skills, prompts, themes, settings, in the workspace and in the agent dir): a symlink
 * to a host file and to /proc/self/environ, a hard link to a host file, a named pipe with a writer
 * waiting, a 1 GiB sparse file; and it swaps folders and files for links in a loop while chats load.
 * The server reads those names as root and hands them to the model: none of it may change what the
 * model is sent beyond the user's own bytes. A scripted provider on a loopback port records every
 * request, as a real provider would receive it, and no request ever carries another file's content or
 * an absolute server path.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { chatFolders } from "../../server/chat/runtime/chat-folders.ts";
import { createTestApp, postJson, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { runIn } from "../helpers/jail.ts";
import { RECORDER_MODEL, type RecordedRequest, recordingProvider } from "../helpers/recording-provider.ts";
import { lines } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

const provider = recordingProvider();
const SECRET = `HOSTSECRET${crypto.randomUUID().replaceAll("-", "")}`;
/** A host file shaped like every resource pi loads (a context file, a skill named `leak`, a prompt). */
const SECRET_TEXT = `---\nname: leak\ndescription: ${SECRET}\n---\n${SECRET} body\n`;
/** The longest entry of this process's environment: what a link to /proc/self/environ would show. */
const ENVIRON = readFileSync("/proc/self/environ", "utf8")
  .split("\0")
  .sort((a, b) => b.length - a.length)[0] as string;

/** Workspace names pi's loader reads, and the agent dir's. */
const WORKSPACE_NAMES = [
  "AGENTS.md",
  "CLAUDE.md",
  ".pi/SYSTEM.md",
  ".pi/APPEND_SYSTEM.md",
  ".pi/settings.json",
  ".pi/skills/leak/SKILL.md",
  ".pi/skills/leak.md",
  ".agents/skills/leak/SKILL.md",
  ".pi/prompts/leak.md",
  ".pi/themes/leak.json",
];
const AGENT_NAMES = [
  "AGENTS.md",
  "SYSTEM.md",
  "APPEND_SYSTEM.md",
  "skills/leak/SKILL.md",
  "prompts/leak.md",
  "themes/leak.json",
];

let t: TestApp;
let workspace: string;
let agentDir: string;
let secretFile: string;
beforeAll(async () => {
  t = await createTestApp();
  ({ workspaceDir: workspace, agentDir } = chatFolders(t.dataDir, "local"));
  mkdirSync(workspace, { recursive: true });
  provider.configure(agentDir);
  secretFile = join(t.dataDir, "host-secret.md");
  writeFileSync(secretFile, SECRET_TEXT);
});
afterAll(async () => {
  await t.close();
  provider.stop();
});

const planted: string[] = [];
afterEach(() => {
  for (const path of planted.splice(0)) rmSync(path, { recursive: true, force: true });
});

/** Every planted path, its folders made first. */
function plantAll(plant: (path: string) => void) {
  const paths = [
    ...WORKSPACE_NAMES.map((n) => join(workspace, n)),
    ...AGENT_NAMES.map((n) => join(agentDir, n)),
  ];
  for (const path of paths) {
    mkdirSync(dirname(path), { recursive: true });
    plant(path);
    planted.push(path);
  }
  for (const dir of [".pi", ".agents"]) planted.push(join(workspace, dir));
  for (const dir of ["skills", "prompts", "themes"]) planted.push(join(agentDir, dir));
}

async function chat(app: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const before = provider.requests.length;
  const events = await lines(
    await app.request("/api/chat", postJson({ model: RECORDER_MODEL, ...body }, headers)),
  );
  expect(events.at(-1)?.type).toBe("done");
  return { events, sent: provider.requests.slice(before) };
}

/** Nothing any request carried, nor any answer the client got, holds `marker`. */
function neverSeen(markers: string[], sent: RecordedRequest[], answers: unknown[] = []) {
  const all = [...sent.map((r) => r.raw), ...answers.map((a) => JSON.stringify(a))].join("\n");
  for (const marker of markers) expect(all.includes(marker)).toBe(false);
}

const withoutDate = (prompt: string) => prompt.replace(/Current date: \d{4}-\d{2}-\d{2}/, "");
const serverPaths = () => [t.dataDir, realpathSync(t.dataDir), REPO_ROOT, realpathSync(REPO_ROOT)];

let baseline = "";
test("with nothing planted: the system prompt names no server path", async () => {
  const { sent } = await chat(t, { message: "hello" });
  expect(sent.length).toBe(1);
  baseline = withoutDate((sent[0] as RecordedRequest).system);
  expect(baseline).toContain("Current working directory: .");
  neverSeen(serverPaths(), sent);
});

describe("a plant under every name pi reads changes nothing the model is sent", () => {
  const kinds: [string, (path: string) => void][] = [
    ["a symlink to a host file", (path) => symlinkSync(secretFile, path)],
    ["a symlink to /proc/self/environ", (path) => symlinkSync("/proc/self/environ", path)],
    ["a hard link to a host file", (path) => linkSync(secretFile, path)],
    [
      "a 1 GiB sparse file (read at most up to the cap: refused unread)",
      (path) => {
        writeFileSync(path, "");
        Bun.spawnSync(["truncate", "-s", "1G", path]);
      },
    ],
  ];
  for (const [name, plant] of kinds) {
    test(name, async () => {
      plantAll(plant);
      const { events, sent } = await chat(t, { message: "hello" });
      const resources = await t.json("/api/chat/resources");
      const commands = await t.json("/api/chat/commands");
      expect(sent.length).toBe(1);
      const request = sent[0] as RecordedRequest;
      expect(withoutDate(request.system)).toBe(baseline);
      expect(request.raw.length).toBeLessThan(256 * 1024);
      neverSeen([SECRET, ENVIRON, ...serverPaths()], sent, [events, resources.body, commands.body]);
    }, 60_000);
  }

  test("a named pipe with a writer waiting is never opened for reading", async () => {
    const released = join(t.dataDir, "released");
    const writers: Bun.Subprocess[] = [];
    plantAll((path) => {
      Bun.spawnSync(["mkfifo", path]);
      // The writer blocks in open() until someone opens the pipe to read; then it would hand over the
      // secret and mark that it got through.
      writers.push(
        Bun.spawn(
          ["sh", "-c", 'exec 3>"$1"; printf "%s" "$2" >&3; touch "$3"', "w", path, SECRET, released],
          {
            stdout: "ignore",
            stderr: "ignore",
          },
        ),
      );
    });
    try {
      const { events, sent } = await chat(t, { message: "hello" });
      const resources = await t.json("/api/chat/resources");
      expect(withoutDate((sent[0] as RecordedRequest).system)).toBe(baseline);
      neverSeen([SECRET], sent, [events, resources.body]);
      // An observation window: a writer would finish at once had its pipe been opened.
      await Bun.sleep(300);
      expect(existsSync(released)).toBe(false);
    } finally {
      for (const writer of writers) writer.kill();
      await Promise.all(writers.map((w) => w.exited));
    }
  }, 60_000);
});

test("the user's own bytes reach the model, under the paths the model itself uses", async () => {
  const own = (relative: string, text: string) => {
    const path = join(workspace, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    planted.push(path);
  };
  own("AGENTS.md", "OWN-AGENTS-TEXT\n");
  own(".pi/APPEND_SYSTEM.md", "OWN-APPEND-TEXT\n");
  own(
    ".pi/skills/tidy/SKILL.md",
    "---\nname: tidy\ndescription: OWN-SKILL-DESCRIPTION\n---\nOWN-SKILL-BODY\n",
  );
  own(".agents/skills/sweep/SKILL.md", "---\nname: sweep\ndescription: OWN-SWEEP-DESCRIPTION\n---\nsweep\n");
  own(".pi/prompts/review.md", "---\ndescription: review\n---\nOWN-PROMPT-BODY $1\n");
  planted.push(join(workspace, ".pi"), join(workspace, ".agents"));
  const { events, sent } = await chat(t, { message: "hello" });
  const system = (sent[0] as RecordedRequest).system;
  expect(system).toContain("## AGENTS.md\n\nOWN-AGENTS-TEXT");
  expect(system).toContain("OWN-APPEND-TEXT");
  expect(system).toContain("<location>.pi/skills/tidy/SKILL.md</location>");
  expect(system).toContain("OWN-SWEEP-DESCRIPTION");
  neverSeen(serverPaths(), sent);
  const sessionId = events[0]?.sessionId as string;
  // A prompt template and a skill command expand to the user's own text.
  const review = await chat(t, { message: "/review carefully", sessionId });
  expect((review.sent[0] as RecordedRequest).user.at(-1)).toBe("OWN-PROMPT-BODY carefully");
  const skill = await chat(t, { message: "/skill:tidy now", sessionId });
  const expanded = (skill.sent[0] as RecordedRequest).user.at(-1) as string;
  expect(expanded).toContain("OWN-SKILL-BODY");
  expect(expanded).toContain('location=".pi/skills/tidy/SKILL.md"');
  neverSeen(serverPaths(), skill.sent);
  // The skill file swapped for a link after the session loaded it: the expansion (a fresh read, so an
  // edited skill is used at once) never follows it, and says so.
  rmSync(join(workspace, ".pi/skills/tidy/SKILL.md"));
  symlinkSync(secretFile, join(workspace, ".pi/skills/tidy/SKILL.md"));
  const swapped = await chat(t, { message: "/skill:tidy again", sessionId });
  expect((swapped.sent[0] as RecordedRequest).user.at(-1)).toContain(
    "The skill's file could not be read (a symbolic link on the way: not read).",
  );
  neverSeen([SECRET], swapped.sent, [swapped.events]);
}, 60_000);

test("a context file linked to another file inside the workspace is read through the link", async () => {
  mkdirSync(join(workspace, "docs"), { recursive: true });
  writeFileSync(join(workspace, "docs", "agents.md"), "OWN-LINKED-RULES\n");
  symlinkSync("docs/agents.md", join(workspace, "AGENTS.md"));
  planted.push(join(workspace, "docs"), join(workspace, "AGENTS.md"));
  const { sent } = await chat(t, { message: "hello" });
  expect((sent[0] as RecordedRequest).system).toContain("## AGENTS.md\n\nOWN-LINKED-RULES");
});

test("folders and files swapped for links in a loop while chats load never reach the model", async () => {
  // The real .pi and .agents hold the user's own files; `evil` holds the secret under the same names.
  const evil = join(t.dataDir, "evil");
  for (const relative of ["skills/leak/SKILL.md", "prompts/leak.md", "APPEND_SYSTEM.md", "SYSTEM.md"]) {
    mkdirSync(dirname(join(evil, relative)), { recursive: true });
    writeFileSync(join(evil, relative), SECRET_TEXT);
  }
  mkdirSync(join(workspace, ".pi/skills/leak"), { recursive: true });
  writeFileSync(
    join(workspace, ".pi/skills/leak/SKILL.md"),
    "---\nname: leak\ndescription: OWN-LEAK-DESCRIPTION\n---\nown\n",
  );
  mkdirSync(join(workspace, ".agents"), { recursive: true });
  writeFileSync(join(workspace, "AGENTS.md"), "OWN-AGENTS-TEXT\n");
  planted.push(join(workspace, ".pi"), join(workspace, ".agents"), join(workspace, "AGENTS.md"));
  const racer = Bun.spawn(
    [
      "sh",
      "-c",
      `cd "$1" && while :; do
        mv -T .pi p.x 2>/dev/null; ln -sT "$2" .pi 2>/dev/null; rm -f .pi; mv -T p.x .pi 2>/dev/null
        mv -T .agents a.x 2>/dev/null; ln -sT "$2" .agents 2>/dev/null; rm -f .agents; mv -T a.x .agents 2>/dev/null
        ln -sfT "$3" A.x; mv -fT A.x AGENTS.md; printf 'OWN-AGENTS-TEXT\\n' > A.y; mv -fT A.y AGENTS.md
      done`,
      "racer",
      workspace,
      evil,
      secretFile,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  const sent: RecordedRequest[] = [];
  const answers: unknown[] = [];
  let rounds = 0;
  try {
    await Bun.sleep(100);
    for (const until = Date.now() + 4000; Date.now() < until; rounds++) {
      const round = await chat(t, { message: "hello" });
      sent.push(...round.sent);
      answers.push(round.events, (await t.json("/api/chat/resources")).body);
    }
  } finally {
    racer.kill();
    await racer.exited;
  }
  expect(rounds).toBeGreaterThan(3);
  // The loop did get in the way, and the user's own files were read between its swaps.
  expect(sent.some((r) => r.system.includes("OWN-AGENTS-TEXT"))).toBe(true);
  neverSeen([SECRET, ...serverPaths()], sent, answers);
}, 120_000);

test("protected mode: the model is shown its sandbox's paths, never the server's", async () => {
  const team = await createTestApp(twoUsers());
  try {
    const paths = chatFolders(team.dataDir, "alice");
    provider.configure(paths.agentDir);
    mkdirSync(paths.workspaceDir, { recursive: true });
    writeFileSync(join(paths.workspaceDir, "AGENTS.md"), "ALICE-OWN-TEXT\n");
    mkdirSync(join(paths.workspaceDir, ".pi"));
    symlinkSync(join(team.dataDir, "app.db"), join(paths.workspaceDir, ".pi/APPEND_SYSTEM.md"));
    const { events, sent } = await chat(team, { message: "hello" }, asUser("alice"));
    const system = (sent[0] as RecordedRequest).system;
    const sandboxes = team.family("chat").runtime.sandboxes;
    expect(sandboxes.availability().available).toBe(true);
    const shown = sandboxes.workspace;
    expect(system).toContain(`## ${shown}/AGENTS.md\n\nALICE-OWN-TEXT`);
    expect(system).toContain(`Current working directory: ${shown}`);
    neverSeen(
      ["SQLite format", team.dataDir, realpathSync(team.dataDir), REPO_ROOT, realpathSync(REPO_ROOT)],
      sent,
      [events],
    );
    // Alice's own sandbox (a real jail, uid 65534) plants links and swaps names in a background loop
    // while she chats: AGENTS.md and a skill alternate between her own text and links to a host file
    // and to /proc/self/environ (which the server, not the jail, would resolve).
    const hostSecret = join(team.dataDir, "host-secret.md");
    writeFileSync(hostSecret, SECRET_TEXT);
    const planted = await runIn(
      sandboxes,
      "alice",
      `cd ${shown} && mkdir -p .agents/skills/leak && printf 'ALICE-OWN-TEXT\n' > own.md &&
      (while :; do
        ln -sfT ${hostSecret} A.x; mv -fT A.x AGENTS.md; cp own.md A.y; mv -fT A.y AGENTS.md
        ln -sfT /proc/self/environ S.x; mv -fT S.x .agents/skills/leak/SKILL.md
        ln -sfT ${hostSecret} S.x; mv -fT S.x .agents/skills/leak/SKILL.md
      done) >/dev/null 2>&1 &
      sleep 0.2`,
    );
    expect(planted.exitCode).toBe(0);
    const during: RecordedRequest[] = [];
    for (const until = Date.now() + 3000; Date.now() < until; )
      during.push(...(await chat(team, { message: "hello" }, asUser("alice"))).sent);
    expect(during.length).toBeGreaterThan(2);
    expect(during.some((r) => r.system.includes("ALICE-OWN-TEXT"))).toBe(true);
    neverSeen([SECRET, ENVIRON, team.dataDir], during);
  } finally {
    await team.close();
  }
}, 120_000);
