/**
 * Families as instances (server/family.ts, server/app.ts): each app has its own, the path table and error
 * envelopes come from what the families declare, and `close()` stops every family before the database
 * closes, the way the server shuts down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { FAMILIES } from "../../server/app.ts";
import { pathOwners } from "../../server/http/families.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

describe("the path table", () => {
  const ownerOf = pathOwners([
    { paths: { prefixes: ["/api/chat", "/v1"] }, value: "a" },
    { paths: { prefixes: ["/search"], exact: ["/"] }, value: "b" },
  ]);

  test("a prefix owns itself and what lies under it, and nothing that merely starts like it", () => {
    expect(["/api/chat", "/api/chat/", "/api/chat/x/y", "/v1", "/v1/agents"].map(ownerOf)).toEqual(
      Array(5).fill("a"),
    );
    expect(["/api/chatty", "/v10", "/api", "/searching"].map(ownerOf)).toEqual(Array(4).fill(undefined));
  });

  test("an exact path owns only itself: the root is search's, what lies under it is not", () => {
    expect(ownerOf("/")).toBe("b");
    expect(["//x", "/x", "/app/"].map(ownerOf)).toEqual([undefined, undefined, undefined]);
  });

  test("no two families declare the same path", () => {
    const declared = FAMILIES.flatMap((f) => [...f.paths.prefixes, ...(f.paths.exact ?? [])]);
    expect(new Set(declared).size).toBe(declared.length);
  });
});

describe("every declared path answers in its family's envelope", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  // What each family's spec says an error looks like, written out here rather than read from the code.
  const SHAPES: Record<string, (body: Record<string, unknown>) => boolean> = {
    chat: (b) => typeof b.message === "string" && !("detail" in b) && !("error" in b),
    turns: (b) => typeof (b.error as { code?: unknown })?.code === "string" && !("message" in b),
    search: (b) => typeof b.detail === "string",
    agents: (b) => typeof b.detail === "string",
  };

  test.each(FAMILIES.map((f) => [f.name, f] as const))("%s", async (name, family) => {
    // A route no family has (DELETE, three segments deep) is a 404 in the envelope of the path's owner.
    const paths = [
      ...family.paths.prefixes.map((p) => `${p}/__no/__such/__route`),
      ...(family.paths.exact ?? []),
    ];
    for (const path of paths) {
      const response = await t.request(path, { method: "DELETE" });
      const body = (await response.json()) as Record<string, unknown>;
      expect({ path, status: response.status, shape: SHAPES[name]?.(body) }).toEqual({
        path,
        status: 404,
        shape: true,
      });
    }
  });
});

describe("instances", () => {
  test("two apps in one process share no family state", async () => {
    const a = await createTestApp();
    const b = await createTestApp();
    try {
      expect(a.family("chat").services).not.toBe(b.family("chat").services);
      expect(a.family("turns").runtime.sandbox).not.toBe(b.family("turns").runtime.sandbox);
      const model = scripted(a, [fauxAssistantMessage("Hello.")]);
      const events = await lines(await chat(a, { message: "hi", model: model.id }));
      expect(events.at(-1)?.type).toBe("done");
      expect(a.family("chat").runtime.host.size).toBe(1);
      expect(b.family("chat").runtime.host.size).toBe(0);
      model.dispose();
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("close() ends the shutdown signal, stops every family's runtime, then closes the database", async () => {
    const t = await createTestApp();
    const { host } = t.family("chat").runtime;
    const pool = t.family("turns").runtime.sandbox.pool;
    expect(pool).toBeDefined();
    const model = scripted(t, [fauxAssistantMessage("Hello.")]);
    await lines(await chat(t, { message: "hi", model: model.id }));
    expect(host.size).toBe(1);
    model.dispose();

    await t.close();
    expect(t.ctx.shutdown.aborted).toBe(true);
    // The chat family's live pi sessions are closed, the turns family's sandbox pool is shut down.
    expect(host.size).toBe(0);
    await expect(pool?.acquire() as Promise<unknown>).rejects.toThrow("the sandbox is shut down");
    await expect(t.ctx.database.get("SELECT 1")).rejects.toThrow();
    // Closing again waits for the same shutdown instead of running it twice.
    await t.close();
  });
});
