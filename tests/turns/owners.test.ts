/**
 * Owner scoping in protected mode: another owner's session, history, turn, run, attachment and files are
 * invisible (404 or empty), never a 200 with their data.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { turnsApp } from "../helpers/turns.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp(twoUsers({ env: { APP_SANDBOX_WARM: "0" } }));
});
afterAll(() => t.close());

const as = (user: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: asUser(user, init.headers as Record<string, string>),
});
const jsonAs = (user: string, method: string, body: unknown) =>
  as(user, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("owner scoping", () => {
  test("alice's rows are 404 for bob", async () => {
    const session = await t.json<{ id: string }>(
      "/api/sessions",
      jsonAs("alice", "POST", { title: "alice's" }),
    );
    const id = session.body.id;
    const form = new FormData();
    form.append("file", new File(["private"], "p.txt", { type: "text/plain" }));
    const attachment = await t.json<{ id: string }>(
      "/api/attachments",
      as("alice", { method: "POST", body: form }),
    );
    expect(attachment.status).toBe(200);
    await t.json("/api/files/content", jsonAs("alice", "PUT", { path: "alice.txt", content: "mine" }));

    expect((await t.json(`/api/sessions/${id}`, as("bob"))).status).toBe(404);
    expect((await t.json(`/api/sessions/${id}/turns`, as("bob"))).status).toBe(404);
    expect((await t.json(`/api/sessions/${id}`, jsonAs("bob", "PATCH", { title: "mine now" }))).status).toBe(
      404,
    );
    expect((await t.json<{ items: unknown[] }>("/api/sessions", as("bob"))).body.items).toEqual([]);
    expect((await t.json(`/api/attachments/${attachment.body.id}`, as("bob"))).status).toBe(404);
    expect((await t.json("/api/files/stat?path=alice.txt", as("bob"))).status).toBe(404);
    expect((await t.json<{ items: unknown[] }>("/api/files", as("bob"))).body.items).toEqual([]);

    // Bob's turn in alice's session: the session does not exist for him.
    const turn = await t.request(
      `/api/sessions/${id}/turns`,
      as("bob", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "k" },
        body: JSON.stringify({ text: "hi" }),
      }),
    );
    expect(await turn.text()).toContain('"message":"Session not found"');

    // Alice still sees everything, unchanged.
    expect((await t.json<{ title: string }>(`/api/sessions/${id}`, as("alice"))).body.title).toBe("alice's");
    expect((await t.json(`/api/attachments/${attachment.body.id}`, as("alice"))).status).toBe(200);
    expect((await t.json("/api/files/stat?path=alice.txt", as("alice"))).status).toBe(200);
    expect((await t.request("/api/sessions")).status).toBe(401);
  });
});
