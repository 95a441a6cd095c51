/**
 * Local mode's file tools run in the server process, and the model's own shell can plant anything in
 * the workspace first. `read`, `edit` and `write` open files beneath the workspace folder: a named pipe
 * (with a writer or a reader waiting), a hard link to a host file, a 1 GiB sparse file are refused (or,
 * for a write, replaced) without blocking the server or reading another file's bytes; the user's own
 * files, and links that stay inside (read and written through), work as before; an edited script keeps
 * its mode.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { chatFolders } from "../../server/chat/runtime/chat-folders.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { type Event, lines } from "../helpers/streams.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const SECRET = `HOSTSECRET${crypto.randomUUID().replaceAll("-", "")}`;

test("read, edit and write never read another file's bytes, never block on a pipe, never write through a planted name", async () => {
  const { workspaceDir: ws } = chatFolders(t.dataDir, "local");
  Bun.spawnSync(["mkdir", "-p", ws]);
  const secret = join(t.dataDir, "host-secret.txt");
  writeFileSync(secret, `${SECRET}\n`);
  writeFileSync(join(ws, "own.md"), "OWN-TEXT\n");
  symlinkSync("own.md", join(ws, "relative-link.md"));
  symlinkSync(join(ws, "own.md"), join(ws, "absolute-link.md"));
  linkSync(secret, join(ws, "hard.md"));
  Bun.spawnSync(["truncate", "-s", "1G", join(ws, "huge.md")]);
  writeFileSync(join(ws, "AGENTS.md"), "rules: old\n");
  symlinkSync("AGENTS.md", join(ws, "CLAUDE.md"));
  writeFileSync(join(ws, "run.sh"), "echo a\n");
  chmodSync(join(ws, "run.sh"), 0o755);
  Bun.spawnSync(["mkfifo", join(ws, "pipe.md"), join(ws, "sink.md")]);
  const released = join(t.dataDir, "released");
  const drained = join(t.dataDir, "drained");
  // A writer waiting to hand over the secret, and a reader waiting to take what is written: each
  // would get through at once had the server opened its pipe.
  const writer = Bun.spawn(
    ["sh", "-c", 'exec 3>"$1"; printf "%s" "$2" >&3; touch "$3"', "w", join(ws, "pipe.md"), SECRET, released],
    { stdout: "ignore", stderr: "ignore" },
  );
  const reader = Bun.spawn(["sh", "-c", 'exec 3<"$1"; cat <&3 > "$2"', "r", join(ws, "sink.md"), drained], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall("read", { path: "own.md" }, { id: "own" }),
        fauxToolCall("read", { path: "relative-link.md" }, { id: "relative" }),
        fauxToolCall("read", { path: "absolute-link.md" }, { id: "absolute" }),
        fauxToolCall("read", { path: "hard.md" }, { id: "hard" }),
        fauxToolCall("read", { path: "huge.md" }, { id: "huge" }),
        fauxToolCall("read", { path: "pipe.md" }, { id: "pipe" }),
        fauxToolCall(
          "edit",
          { path: "hard.md", edits: [{ oldText: "HOSTSECRET", newText: "x" }] },
          { id: "edit-hard" },
        ),
        fauxToolCall(
          "edit",
          { path: "pipe.md", edits: [{ oldText: "a", newText: "b" }] },
          { id: "edit-pipe" },
        ),
        fauxToolCall("write", { path: "sink.md", content: "PWNED" }, { id: "write-sink" }),
        fauxToolCall(
          "edit",
          { path: "run.sh", edits: [{ oldText: "echo a", newText: "echo b" }] },
          { id: "edit-run" },
        ),
        fauxToolCall(
          "edit",
          { path: "CLAUDE.md", edits: [{ oldText: "old", newText: "new" }] },
          { id: "edit-link" },
        ),
      ],
      { stopReason: "toolUse" },
    ),
    fauxAssistantMessage("done"),
  ]);
  try {
    const events = await lines(await t.request("/api/chat", postJson({ message: "look", model: model.id })));
    expect(events.at(-1)?.type).toBe("done");
    const parts: Record<string, Event> = Object.fromEntries(
      events
        .filter((e) => e.type === "tool" && e.part.output !== undefined)
        .map((e) => [e.part.toolCallId, e.part]),
    );
    const output = (id: string) => JSON.stringify(parts[id]?.output);
    for (const id of ["own", "relative", "absolute"]) {
      expect([id, parts[id]?.isError]).toEqual([id, false]);
      expect(output(id)).toContain("OWN-TEXT");
    }
    const refusals: [string, string][] = [
      ["hard", "has other names (hard links)"],
      ["huge", "is larger than"],
      ["pipe", "is not a regular file"],
      ["edit-hard", "has other names (hard links)"],
      ["edit-pipe", "is not a regular file"],
    ];
    for (const [id, words] of refusals) {
      expect([id, parts[id]?.isError]).toEqual([id, true]);
      expect(output(id)).toContain(words);
    }
    expect(parts["write-sink"]?.isError).toBe(false);
    expect(readFileSync(join(ws, "sink.md"), "utf8")).toBe("PWNED"); // a file now, not the pipe
    expect(parts["edit-run"]?.isError).toBe(false);
    expect(readFileSync(join(ws, "run.sh"), "utf8")).toBe("echo b\n");
    expect(statSync(join(ws, "run.sh")).mode & 0o777).toBe(0o755);
    // A link inside is written through to its target, as a plain open would, and stays a link.
    expect(parts["edit-link"]?.isError).toBe(false);
    expect(readFileSync(join(ws, "AGENTS.md"), "utf8")).toBe("rules: new\n");
    expect(lstatSync(join(ws, "CLAUDE.md")).isSymbolicLink()).toBe(true);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(t.dataDir);
    expect(readFileSync(secret, "utf8")).toBe(`${SECRET}\n`);
    await Bun.sleep(300); // an observation window: either pipe's process would finish at once
    expect([existsSync(released), existsSync(drained)]).toEqual([false, false]);
  } finally {
    writer.kill();
    reader.kill();
    await Promise.all([writer.exited, reader.exited]);
    model.dispose();
  }
}, 60_000);
