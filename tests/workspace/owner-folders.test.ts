/**
 * One folder per owner, from one function: the name is a single safe path segment, different for every
 * owner id, and chat and turns use the same workspace (a file written through the turns Files API is
 * what a chat agent's `read` tool sees).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import fc from "fast-check";
import type { CredentialResolver } from "../../server/auth/identity.ts";
import { chatFolders } from "../../server/chat/runtime/chat-folders.ts";
import { ownerFolderName, ownerFolders } from "../../server/workspace/owner-folders.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

const SEGMENT = /^[A-Za-z0-9_=-]{1,65}$/;
const hashed = (name: string) => /^=[0-9a-f]{64}$/.test(name);

describe("ownerFolderName", () => {
  test("a safe id is its own folder; anything else is = and the SHA-256 of the whole id", () => {
    expect(ownerFolderName("local")).toBe("local");
    expect(ownerFolderName("user_1-A")).toBe("user_1-A");
    expect(ownerFolderName("a".repeat(64))).toBe("a".repeat(64));
    const hostile = [
      "",
      ".",
      "..",
      "../../etc",
      "a/b",
      "/",
      "a\0b",
      "\0",
      "a".repeat(65),
      "x".repeat(1_000_000),
      "auth0|alice@example.com",
      "zoë",
      "用户",
      "🙂",
      "\ud800",
      "\ufffd",
      "a\udc00b",
      "a\ufffdb",
      "=abc",
      `=${"0".repeat(64)}`,
      "a b",
      "C:\\x",
    ];
    for (const owner of hostile) {
      const name = ownerFolderName(owner);
      expect({ owner: owner.slice(0, 20), hashed: hashed(name) }).toEqual({
        owner: owner.slice(0, 20),
        hashed: true,
      });
      if (!/[\uD800-\uDFFF]/u.test(owner))
        expect(new Bun.CryptoHasher("sha256").update(owner).digest("hex")).toBe(name.slice(1));
    }
    expect(new Set(hostile.map(ownerFolderName)).size).toBe(hostile.length);
  });

  test("property: always one safe segment, never . or .., and different ids never share a name", () => {
    const ids = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.string({ unit: "binary", maxLength: 80 }),
      // Lone surrogates, which UTF-8 would fold into U+FFFD.
      fc.string({ unit: fc.constantFrom("a", "\ud800", "\udc00", "\ufffd", "\ud83d\ude42"), maxLength: 6 }),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
      fc.stringMatching(/^[=x.%][0-9a-f]{0,70}$/),
    );
    fc.assert(
      fc.property(ids, ids, (a, b) => {
        for (const name of [ownerFolderName(a), ownerFolderName(b)]) {
          expect(SEGMENT.test(name)).toBe(true);
          expect(name === "." || name === "..").toBe(false);
        }
        expect(ownerFolderName(a) === ownerFolderName(b)).toBe(a === b);
      }),
      { numRuns: 2000 },
    );
  });

  test("ids sharing their first 60 bytes get different folders (the old hex form cut them to 120 digits)", () => {
    const prefix = "p".repeat(60);
    const a = ownerFolders("/data", `${prefix}|alice`);
    const b = ownerFolders("/data", `${prefix}|bob`);
    for (const key of Object.keys(a) as (keyof typeof a)[]) expect(a[key]).not.toBe(b[key]);
  });

  test("every per-owner folder is the owner's one segment under its root; chat's view is the same", () => {
    const owner = "auth0|alice@example.com";
    const name = ownerFolderName(owner);
    expect(ownerFolders("/data", owner)).toEqual({
      workspace: `/data/workspaces/${name}`,
      files: `/data/workspaces/${name}/files`,
      sessions: `/data/sessions/${name}`,
      piAgent: `/data/pi-agent/${name}`,
      attachments: `/data/attachments/${name}`,
      artifacts: `/data/artifacts/${name}`,
    });
    expect(chatFolders("/data", owner)).toEqual({
      sessionsDir: `/data/sessions/${name}`,
      workspaceDir: `/data/workspaces/${name}`,
      agentDir: `/data/pi-agent/${name}`,
    });
  });
});

describe("through the API, in protected mode", () => {
  const LONG = "q".repeat(60);
  const owners: Record<string, string> = {
    alice: "auth0|alice@example.com",
    dots: "..",
    long1: `${LONG}|one`,
    long2: `${LONG}|two`,
  };
  const resolver: CredentialResolver = (request) => {
    const token = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    const id = owners[token];
    return id === undefined ? undefined : { id, kind: "bearer" };
  };
  const as = (who: string) => ({ authorization: `Bearer ${who}` });
  const putFile = (who: string, path: string, content: string) =>
    t.request("/api/files/content", {
      method: "PUT",
      headers: { "content-type": "application/json", ...as(who) },
      body: JSON.stringify({ path, content }),
    });
  const listFiles = async (who: string) =>
    (await t.json<{ items: { path: string }[] }>("/api/files", { headers: as(who) })).body.items.map(
      (i) => i.path,
    );

  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", APP_CHAT_DATABASE_URL: "sqlite", APP_SANDBOX_WARM: "0" },
      resolvers: [resolver],
    });
  });
  afterAll(() => t.close());

  test("auth0|alice@example.com has ONE workspace: a file put through the turns Files API is what chat's read tool reads", async () => {
    expect((await putFile("alice", "shared/note.txt", "from the files api")).status).toBe(200);
    const model = scripted(t, [
      fauxAssistantMessage([fauxToolCall("read", { path: "files/shared/note.txt" }, { id: "r" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("read it"),
    ]);
    const events = await lines(
      await t.request("/api/chat", postJson({ message: "read", model: model.id }, as("alice"))),
    );
    model.dispose();
    const result = events.find(
      (e) => e.type === "tool" && e.part.output !== undefined && e.part.toolCallId === "r",
    );
    expect(result?.part.isError).toBe(false);
    expect(JSON.stringify(result?.part.output)).toContain("from the files api");
    // One folder on disk for that owner under workspaces/, named by the shared function.
    const folder = ownerFolders(t.dataDir, owners.alice as string);
    expect(existsSync(join(folder.files, "shared", "note.txt"))).toBe(true);
    expect(readdirSync(join(t.dataDir, "workspaces")).filter((n) => n !== "local")).not.toContain(
      encodeURIComponent(owners.alice as string),
    );
  });

  test("owner '..' writes into its own folder, not into the data dir or workspaces/ itself", async () => {
    expect((await putFile("dots", "escape.txt", "dots")).status).toBe(200);
    expect(existsSync(join(ownerFolders(t.dataDir, "..").files, "escape.txt"))).toBe(true);
    expect(existsSync(join(t.dataDir, "files", "escape.txt"))).toBe(false);
    expect(existsSync(join(t.dataDir, "workspaces", "files", "escape.txt"))).toBe(false);
    expect(await listFiles("alice")).not.toContain("escape.txt");
  });

  test("two owners whose ids share the first 60 bytes see only their own files and chat sessions", async () => {
    expect((await putFile("long1", "mine.txt", "one")).status).toBe(200);
    expect(await listFiles("long1")).toEqual(["mine.txt"]);
    expect(await listFiles("long2")).toEqual([]);
    const model = scripted(t, [fauxAssistantMessage("hi one"), fauxAssistantMessage("hi two")]);
    for (const who of ["long1", "long2"])
      expect(
        (await lines(await t.request("/api/chat", postJson({ message: who, model: model.id }, as(who))))).at(
          -1,
        )?.type,
      ).toBe("done");
    model.dispose();
    const one = readdirSync(ownerFolders(t.dataDir, owners.long1 as string).sessions);
    const two = readdirSync(ownerFolders(t.dataDir, owners.long2 as string).sessions);
    expect(one).toHaveLength(1);
    expect(two).toHaveLength(1);
    expect(one).not.toEqual(two);
    const titles = async (who: string) =>
      (
        await t.json<{ sessions: { title: string }[] }>("/api/chat/sessions", { headers: as(who) })
      ).body.sessions.map((s) => s.title);
    expect(await titles("long1")).toEqual(["long1"]);
    expect(await titles("long2")).toEqual(["long2"]);
  });
});
