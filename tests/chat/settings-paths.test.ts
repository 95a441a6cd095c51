/**
 * Chat settings `skills`, `prompts` and `themes` name folders and files the server reads for the
 * model's context. On a team server a user could name host folders there and read the answers (pi
 * listed the files it found, and said "does not exist" or "not a json file"): a scanner of the host's
 * filesystem. Only paths inside the owner's pi agent dir are accepted (400 otherwise), decided from the
 * text alone, so the answer is the same whether the path exists or not; an entry already in the file
 * that points outside is never looked at.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chatFolders } from "../../server/chat/runtime/chat-folders.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

let t: TestApp;
let host: string;
const missing = `/nonexistent-${crypto.randomUUID()}`;
beforeAll(async () => {
  t = await createTestApp(twoUsers());
  // A host folder holding one of each resource, which must never be listed.
  host = join(t.dataDir, "host-folder");
  mkdirSync(join(host, "scanme"), { recursive: true });
  writeFileSync(join(host, "scanme", "SKILL.md"), "---\nname: scanme\ndescription: HOSTLISTED\n---\n");
  writeFileSync(join(host, "HOSTLISTED.md"), "HOSTLISTED prompt");
  writeFileSync(join(host, "HOSTLISTED.json"), JSON.stringify({ name: "HOSTLISTED" }));
});
afterAll(() => t.close());

const post = (settings: Record<string, unknown>) =>
  t.json<{ message?: string; diagnostics?: string[] }>(
    "/api/chat/settings",
    postJson({ settings }, asUser("alice")),
  );
const settingsFile = () => {
  try {
    return readFileSync(join(chatFolders(t.dataDir, "alice").agentDir, "settings.json"), "utf8");
  } catch {
    return "";
  }
};

test("a path outside the agent dir is a 400, the same whether it exists or not, and changes nothing", async () => {
  const before = settingsFile();
  for (const key of ["skills", "prompts", "themes"]) {
    const pairs: [string, string][] = [
      [host, missing],
      ["/etc", `${missing}/etc`],
      ["/etc/passwd", `${missing}.json`],
      ["../../../../../../etc", `../../../../../..${missing}`],
      ["../../host-folder", "../../no-such-folder"],
      ["~/.ssh", "~/no-such-folder"],
      ["~root", "~nosuchuser"],
      ["!skills/x", "+/etc/passwd"],
      ["skills/../../../etc", "skills/../../../nothing"],
    ];
    for (const [exists, absent] of pairs) {
      const a = await post({ [key]: [exists] });
      const b = await post({ [key]: ["mine", absent] });
      expect([key, exists, a.status]).toEqual([key, exists, 400]);
      expect(a.body.message).toContain("only paths inside your pi agent dir are accepted");
      // Word for word the same answer, but for the entry's index.
      expect(b.body).toEqual({ message: (a.body.message as string).replace("[0]", "[1]") });
      expect(JSON.stringify(a.body)).not.toContain("HOSTLISTED");
    }
  }
  expect(settingsFile()).toBe(before);
});

test("paths inside the agent dir are accepted, existing or not", async () => {
  const accepted = await post({
    skills: ["more-skills", "./team/skills"],
    prompts: ["prompts"],
    themes: ["a/b"],
  });
  expect(accepted.status).toBe(200);
  expect(JSON.parse(settingsFile())).toMatchObject({
    skills: ["more-skills", "./team/skills"],
    prompts: ["prompts"],
    themes: ["a/b"],
  });
  // Sending the current value again is no change, and passes.
  expect((await post({ skills: ["more-skills", "./team/skills"], defaultThinkingLevel: "low" })).status).toBe(
    200,
  );
});

test("an outside entry already in the file (an older server wrote it) is never looked at", async () => {
  const agentDir = chatFolders(t.dataDir, "alice").agentDir;
  const resources = async (entries: string[]) => {
    writeFileSync(
      join(agentDir, "settings.json"),
      JSON.stringify({ skills: entries, prompts: entries, themes: entries }),
    );
    return (await t.json<Record<string, unknown>>("/api/chat/resources", { headers: asUser("alice") })).body;
  };
  const existing = await resources([host, `${host}/HOSTLISTED.json`, "/etc"]);
  const absent = await resources([missing, `${missing}.json`, `${missing}/etc`]);
  expect(JSON.stringify(existing)).not.toContain("HOSTLISTED");
  expect(JSON.stringify(existing)).not.toContain("scanme");
  expect(existing).toEqual(absent);
  expect(existing.diagnostics).toContain(
    "skill: settings skills entry 0: only paths inside your pi agent dir are loaded (filters and other paths are not)",
  );
});
