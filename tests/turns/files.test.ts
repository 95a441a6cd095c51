/**
 * The Files API on the workspace files/ root: list, stat, paged content, create/overwrite, append,
 * patch, delete; sha256 preconditions (409 when stale), 409 for a non-empty directory and an absent or
 * ambiguous `old`; every traversal attempt refused; the volume tree.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { AppError } from "../../server/http/errors.ts";
import { TurnWorkspaceFiles } from "../../server/turns/stores/workspace-files.ts";
import type { TestApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";
import { turnsApp } from "../helpers/turns.ts";

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp({
    env: { APP_SANDBOX_WARM: "0" },
    edits: [
      ["file_page_bytes = 65536", "file_page_bytes = 1024"],
      ["max_upload_bytes = 10485760", "max_upload_bytes = 4096"],
    ],
  });
});
afterAll(() => t.close());

const send = (method: string, path: string, body: unknown) =>
  t.json<Record<string, unknown> & { error?: { code: string } }>(path, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const put = (body: unknown) => send("PUT", "/api/files/content", body);

describe("files API", () => {
  test("create, read, stat, overwrite with precondition, append, patch, delete", async () => {
    const created = await put({ path: "notes/a.txt", content: "hello world" });
    expect(created.status).toBe(200);
    const sha = created.body.sha256 as string;
    expect(sha).toBe(new Bun.CryptoHasher("sha256").update("hello world").digest("hex"));
    expect((await t.json("/api/files/stat?path=notes/a.txt")).body).toMatchObject({
      type: "file",
      size: 11,
      sha256: sha,
    });
    expect((await t.json("/api/files/content?path=notes/a.txt")).body).toMatchObject({
      content: "hello world",
      nextOffset: null,
      sha256: sha,
    });
    const list = await t.json<{ items: { path: string; type: string }[] }>("/api/files");
    expect(list.body.items).toContainEqual(expect.objectContaining({ path: "notes", type: "directory" }));
    expect(list.body.items).toContainEqual(expect.objectContaining({ path: "notes/a.txt", type: "file" }));

    // Creating over an existing file needs overwrite or the current checksum.
    expect((await put({ path: "notes/a.txt", content: "x" })).status).toBe(409);
    const stale = await put({ path: "notes/a.txt", content: "x", sha256: "0".repeat(64) });
    expect(stale.status).toBe(409);
    expect(stale.body.error?.code).toBe("stale_sha256");
    const replaced = await put({ path: "notes/a.txt", content: "one two one", sha256: sha });
    expect(replaced.status).toBe(200);

    const appended = await send("POST", "/api/files/append", {
      path: "notes/a.txt",
      content: " three",
      sha256: replaced.body.sha256,
    });
    expect(appended.body.size).toBe(17);
    expect(
      (
        await send("POST", "/api/files/append", {
          path: "notes/a.txt",
          content: "!",
          sha256: replaced.body.sha256,
        })
      ).status,
    ).toBe(409);

    const ambiguous = await send("PATCH", "/api/files/content", {
      path: "notes/a.txt",
      old: "one",
      new: "1",
    });
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error?.code).toBe("patch_ambiguous");
    const absent = await send("PATCH", "/api/files/content", { path: "notes/a.txt", old: "four", new: "4" });
    expect(absent.status).toBe(409);
    expect(absent.body.error?.code).toBe("patch_no_match");
    const patched = await send("PATCH", "/api/files/content", { path: "notes/a.txt", old: "two", new: "2" });
    expect(patched.status).toBe(200);
    expect(patched.body.sha256).toBe(new Bun.CryptoHasher("sha256").update("one 2 one three").digest("hex"));
    expect(
      (await send("PATCH", "/api/files/content", { path: "notes/a.txt", old: "2", new: "x", sha256: sha }))
        .status,
    ).toBe(409);

    expect((await t.json("/api/files/content?path=notes", { method: "DELETE" })).status).toBe(409);
    expect(
      (await t.json(`/api/files/content?path=notes/a.txt&sha256=${sha}`, { method: "DELETE" })).status,
    ).toBe(409);
    expect((await t.json("/api/files/content?path=notes/a.txt", { method: "DELETE" })).status).toBe(200);
    expect((await t.json("/api/files/content?path=notes", { method: "DELETE" })).status).toBe(200);
    expect((await t.json("/api/files/stat?path=notes")).status).toBe(404);
  });

  test("a file used as a directory, or an overlong name, is a clear 4xx", async () => {
    await put({ path: "plain.txt", content: "x", overwrite: true });
    const under = await put({ path: "plain.txt/inner.txt", content: "y" });
    expect(under.status).toBe(409);
    expect(under.body.error?.code).toBe("not_a_directory");
    expect((await t.json("/api/files/stat?path=plain.txt/inner.txt")).status).toBe(409);
    expect((await put({ path: "x".repeat(300), content: "y" })).status).toBe(422);
  });

  test("content comes in bounded pages that never split a character", async () => {
    const text = "é".repeat(700);
    await put({ path: "big.txt", content: text, overwrite: true });
    const first = await t.json<{ content: string; nextOffset: number | null; size: number }>(
      "/api/files/content?path=big.txt",
    );
    expect(first.body.size).toBe(1400);
    expect(first.body.nextOffset).toBe(1024);
    const second = await t.json<{ content: string; nextOffset: number | null }>(
      `/api/files/content?path=big.txt&offset=${first.body.nextOffset}`,
    );
    expect(first.body.content + second.body.content).toBe(text);
    expect(second.body.nextOffset).toBeNull();
  });

  test("traversal attempts are refused and change nothing", async () => {
    const outside = tempDir();
    writeFileSync(join(outside.path, "secret.txt"), "secret");
    const root = join(t.dataDir, "workspaces", "local", "files");
    mkdirSync(root, { recursive: true });
    symlinkSync(outside.path, join(root, "link"));
    symlinkSync(join(outside.path, "secret.txt"), join(root, "secret-link.txt"));
    try {
      for (const path of [
        "../app.db",
        "a/../../x",
        "/etc/passwd",
        "link/secret.txt",
        "secret-link.txt",
        "..",
        "C:\\x",
        "a\u0000b",
      ]) {
        const read = await t.json<{ error: { code: string } }>(
          `/api/files/content?path=${encodeURIComponent(path)}`,
        );
        expect({ path, status: read.status }).toEqual({ path, status: 422 });
        const write = await put({ path, content: "pwned", overwrite: true });
        expect({ path, status: write.status }).toEqual({ path, status: 422 });
      }
      expect(await Bun.file(join(outside.path, "secret.txt")).text()).toBe("secret");
      const list = await t.json<{ items: { path: string }[] }>("/api/files");
      expect(list.body.items.some((i) => i.path.startsWith("link"))).toBe(false);
    } finally {
      outside.remove();
    }
  });

  test("property: any path either resolves inside the root or is refused", () => {
    const files = new TurnWorkspaceFiles(t.dataDir, "local", 4096);
    const segment = fc.constantFrom(
      "..",
      ".",
      "a",
      "b",
      "",
      "/",
      "\\",
      "C:",
      "~",
      "%2e%2e",
      "\u0000",
      "link",
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (parts) => {
        const path = parts.join("/");
        try {
          const resolved = files.resolve(path);
          expect(resolved.startsWith(`${files.root}/`)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("bad bodies are 422 and oversize writes 413", async () => {
    expect((await put({ path: "x.txt" })).status).toBe(422);
    expect((await put({ path: "x.txt", content: "a", sha256: "nothex" })).status).toBe(422);
    expect((await t.json("/api/files/content")).status).toBe(422);
    expect((await t.json("/api/files/content?path=x.txt&offset=-1")).status).toBe(422);
    const big = await put({ path: "big2.txt", content: "x".repeat(5000) });
    expect(big.status).toBe(413);
    expect((await t.json("/api/files/stat?path=big2.txt")).status).toBe(404);
  });

  test("the volume tree lists the workspace read-only", async () => {
    await put({ path: "tree/one.txt", content: "1", overwrite: true });
    const tree = await t.json<{ paths: string[]; truncated: boolean }>("/api/volume/tree");
    expect(tree.status).toBe(200);
    expect(tree.body.paths).toContain("files/");
    expect(tree.body.paths).toContain("files/tree/one.txt");
    expect(tree.body.truncated).toBe(false);
    expect((await t.request("/api/volume/tree", { method: "POST" })).status).toBeGreaterThanOrEqual(400);
  });
});
