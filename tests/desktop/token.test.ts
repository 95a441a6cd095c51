/** The server side of the desktop launch token: APP_DESKTOP_TOKEN guards every non-public route. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { carriesDesktopToken, DESKTOP_TOKEN_COOKIE } from "../../server/auth/desktop-token.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { PROBE_PATHS, PUBLIC_GET_PATHS, probeRoutes } from "../helpers/probes.ts";
import { twoUsers } from "../helpers/users.ts";

const TOKEN = "k3y-of-this-launch_0123456789abcdefABCDEF";
const cookie = (value: string) => ({ cookie: `theme=dark; ${DESKTOP_TOKEN_COOKIE}=${value}; other=1` });

describe("local mode started by the desktop shell", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { APP_DESKTOP_TOKEN: TOKEN }, plugins: [probeRoutes] });
  });
  afterAll(() => t.close());

  test("without the token every family's non-public route is a 401 in its envelope", async () => {
    expect(t.ctx.config.mode.kind).toBe("local");
    const chat = await t.json(PROBE_PATHS.chat);
    expect(chat.status).toBe(401);
    expect(chat.body).toEqual({ message: "This server only answers the desktop app that started it" });
    const turns = await t.json(PROBE_PATHS.turns);
    expect(turns.status).toBe(401);
    expect(turns.body).toMatchObject({ error: { code: "unauthorized" } });
    expect((await t.request(PROBE_PATHS.search, postJson({ query: "x" }))).status).toBe(401);
    // Before validation and routing: a broken body or an unknown path reveals nothing.
    expect((await t.request(PROBE_PATHS.agents, postJson("{broken"))).status).toBe(401);
    expect((await t.request("/v1/nothing")).status).toBe(401);
    // POST to the UI's path is not a static file.
    expect((await t.request("/app/", { method: "POST" })).status).toBe(401);
  });

  test("a wrong, truncated, extended or empty token is a 401", async () => {
    for (const bad of ["nope", TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), ""]) {
      for (const headers of [cookie(bad), { authorization: `Bearer ${bad}` }]) {
        const response = await t.request(PROBE_PATHS.turns, { headers });
        expect({ bad, headers, status: response.status }).toEqual({ bad, headers, status: 401 });
      }
    }
    // The token under another cookie name does not count.
    expect((await t.request(PROBE_PATHS.turns, { headers: { cookie: `token=${TOKEN}` } })).status).toBe(401);
  });

  test("the token as cookie or bearer opens the route, and the caller is still the local user", async () => {
    for (const headers of [cookie(TOKEN), { authorization: `Bearer ${TOKEN}` }]) {
      const { status, body } = await t.json(PROBE_PATHS.turns, { headers });
      expect(status).toBe(200);
      expect(body).toMatchObject({ identity: { id: "local", kind: "local" } });
    }
    const posted = await t.json(PROBE_PATHS.search, postJson({ query: "hello" }, cookie(TOKEN)));
    expect(posted).toMatchObject({ status: 200, body: { echo: { query: "hello" } } });
  });

  test("public routes stay open without it", async () => {
    for (const path of PUBLIC_GET_PATHS) {
      const response = await t.request(path);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
    }
  });
});

test("protected mode with a desktop token needs both the token and an identity", async () => {
  const t = await createTestApp(twoUsers({ env: { APP_DESKTOP_TOKEN: TOKEN }, plugins: [probeRoutes] }));
  try {
    expect((await t.request(PROBE_PATHS.turns, { headers: { "x-test-user": "alice" } })).status).toBe(401);
    expect((await t.request(PROBE_PATHS.turns, { headers: cookie(TOKEN) })).status).toBe(401);
    const both = await t.json(PROBE_PATHS.turns, { headers: { ...cookie(TOKEN), "x-test-user": "alice" } });
    expect(both).toMatchObject({ status: 200, body: { identity: { id: "alice" } } });
  } finally {
    await t.close();
  }
});

test("without APP_DESKTOP_TOKEN local mode needs no token", async () => {
  const t = await createTestApp({ plugins: [probeRoutes] });
  try {
    expect((await t.request(PROBE_PATHS.turns)).status).toBe(200);
  } finally {
    await t.close();
  }
});

test("carriesDesktopToken reads the cookie among others, repeated names, and bearer in any case", () => {
  const request = (headers: Record<string, string>) => new Request("http://x/", { headers });
  expect(carriesDesktopToken(request({ cookie: `${DESKTOP_TOKEN_COOKIE}=${TOKEN}` }), TOKEN)).toBe(true);
  expect(
    carriesDesktopToken(
      request({ cookie: `${DESKTOP_TOKEN_COOKIE}=old; ${DESKTOP_TOKEN_COOKIE}=${TOKEN}` }),
      TOKEN,
    ),
  ).toBe(true);
  expect(carriesDesktopToken(request({ authorization: `bearer ${TOKEN}` }), TOKEN)).toBe(true);
  expect(carriesDesktopToken(request({ authorization: `Basic ${TOKEN}` }), TOKEN)).toBe(false);
  expect(carriesDesktopToken(request({}), TOKEN)).toBe(false);
});
