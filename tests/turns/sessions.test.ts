/** Sessions: create, list (owned, newest first, paginated), read, rename/archive, history; bad input. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp();
});
afterAll(() => t.close());

const json = { "content-type": "application/json" };

describe("sessions", () => {
  test("create, read, list newest first with paging", async () => {
    const created = await t.json<{ id: string; title: string; archived: boolean }>("/api/sessions", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ title: "First" }),
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ title: "First", archived: false });
    const second = await createSession(t, "Second");
    const read = await t.json<{ id: string }>(`/api/sessions/${created.body.id}`);
    expect(read.body.id).toBe(created.body.id);
    const list = await t.json<{ items: { id: string }[]; total: number }>("/api/sessions?limit=1");
    expect(list.body.items.map((s) => s.id)).toEqual([second]);
    expect(list.body.total).toBeGreaterThanOrEqual(2);
    const page2 = await t.json<{ items: { id: string }[] }>("/api/sessions?limit=1&offset=1");
    expect(page2.body.items.map((s) => s.id)).toEqual([created.body.id]);
  });

  test("rename, archive and unarchive", async () => {
    const id = await createSession(t, "Old");
    const patch = (body: unknown) =>
      t.json<{ title: string; archived: boolean }>(`/api/sessions/${id}`, {
        method: "PATCH",
        headers: json,
        body: JSON.stringify(body),
      });
    expect((await patch({ title: "New" })).body).toMatchObject({ title: "New", archived: false });
    expect((await patch({ archived: true })).body).toMatchObject({ title: "New", archived: true });
    const archived = await t.json<{ items: { id: string }[] }>("/api/sessions?archived=true");
    expect(archived.body.items.map((s) => s.id)).toContain(id);
    expect((await patch({ archived: false })).body.archived).toBe(false);
  });

  test("bad input is a 4xx in the turns envelope and changes nothing", async () => {
    const before = (await t.json<{ total: number }>("/api/sessions")).body.total;
    for (const body of [
      "{",
      JSON.stringify({}),
      JSON.stringify({ title: "" }),
      JSON.stringify({ title: 5 }),
    ]) {
      const r = await t.json<{ error: { code: string } }>("/api/sessions", {
        method: "POST",
        headers: json,
        body,
      });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(typeof r.body.error.code).toBe("string");
    }
    expect((await t.json<{ total: number }>("/api/sessions")).body.total).toBe(before);
    const id = await createSession(t);
    const empty = await t.json(`/api/sessions/${id}`, { method: "PATCH", headers: json, body: "{}" });
    expect(empty.status).toBe(422);
    const missing = await t.json<{ error: { code: string } }>("/api/sessions/nope");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect((await t.json("/api/sessions?limit=0")).status).toBe(422);
  });

  test("history lists committed turns in order with user input and assistant parts", async () => {
    const id = await createSession(t);
    await runTurn(t, id, { text: "```python\nprint(6 * 7)\n```" });
    await runTurn(t, id, { text: "```python\nprint('second')\n```" });
    const history = await t.json<{
      items: {
        status: string;
        messages: { role: string; parts: { type: string; text?: string; data?: { output?: string } }[] }[];
        usage: unknown;
      }[];
    }>(`/api/sessions/${id}/turns`);
    expect(history.status).toBe(200);
    expect(history.body.items.map((i) => i.status)).toEqual(["completed", "completed"]);
    const [first] = history.body.items;
    expect(first?.messages[0]).toEqual({
      role: "user",
      parts: [{ type: "text", text: "```python\nprint(6 * 7)\n```" }],
    });
    const outputs = first?.messages[1]?.parts
      .filter((p) => p.type === "data-output")
      .map((p) => p.data?.output);
    expect(outputs).toEqual(["42\n"]);
    expect(first?.usage).toBeDefined();
  });
});
