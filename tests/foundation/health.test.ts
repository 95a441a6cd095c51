/** Liveness, readiness, the chat health probe and the root probe (docs/design.md §2 and §3). */
import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("before composition", () => {
  test("/health answers; /health/ready and every other route are 503 service_not_ready", async () => {
    t = await createTestApp({ compose: false });
    const health = await t.json<{ name: string; version: string }>("/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ name: "Atrium", version: expect.stringMatching(/^\d+\.\d+\.\d+/) });

    const ready = await t.json("/health/ready");
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ error: { code: "service_not_ready", message: expect.any(String) } });

    expect((await t.json("/api/health")).body).toEqual({ status: "ok", runtime: "starting" });
    const other = await t.request("/swagger/json");
    expect(other.status).toBe(503);

    await t.compose();
    const after = await t.json("/health/ready");
    expect(after.status).toBe(200);
    expect(after.body).toEqual({
      status: "ready",
      name: "Atrium",
      version: health.body.version,
      database: "ok",
      mode: "local",
      sandbox: expect.objectContaining({ isolation: expect.stringMatching(/^(bubblewrap|none)$/) }),
    });
    expect((await t.json("/api/health")).body).toEqual({ status: "ok", runtime: "ready" });
  });
});

describe("after composition", () => {
  test("/health/ready proves a database round trip: a closed database is 503", async () => {
    t = await createTestApp();
    expect((await t.request("/health/ready")).status).toBe(200);
    // app.db's connection under the port on SQLite; the pool on PostgreSQL (the server's one database).
    if (t.ctx.database.engine === "sqlite") t.ctx.db?.close();
    else await t.ctx.database.close();
    const ready = await t.json<{ error: { code: string; message: string } }>("/health/ready");
    expect(ready.status).toBe(503);
    expect(ready.body.error).toEqual({ code: "service_not_ready", message: "The database is unreachable" });
  });

  test("draining for shutdown turns readiness off", async () => {
    t = await createTestApp();
    t.ctx.readiness.markDraining();
    expect((await t.request("/health/ready")).status).toBe(503);
    expect((await t.request("/health")).status).toBe(200);
    expect((await t.json("/api/health")).body).toEqual({ status: "ok", runtime: "stopping" });
    // In-flight work is still served while draining.
    expect((await t.request("/swagger/json")).status).toBe(200);
  });
});

describe("GET /", () => {
  test("a browser is redirected to the UI", async () => {
    t = await createTestApp();
    const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const response = await t.request("/", { headers: { accept: browser } });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/app/");
  });

  test("anything else gets the JSON root probe", async () => {
    t = await createTestApp();
    const expected = {
      message: "Welcome to Atrium",
      name: "Atrium",
      version: expect.any(String),
      docs: "/swagger",
    };
    for (const accept of [undefined, "*/*", "application/json", "application/json, text/html;q=0.5"]) {
      const response = await t.json("/", { headers: accept ? { accept } : {} });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(expected);
    }
  });
});
