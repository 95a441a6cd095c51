/**
 * The CSRF skip of the workspace reindex and the sandbox settings applies only to a request whose
 * identity came from a valid header credential (a Bearer session token): a cookie-authenticated request
 * that merely carries some other `Authorization` header (Basic, or a Bearer value that is no token)
 * still needs the CSRF token.
 */
import { afterEach, expect, test } from "bun:test";
import { postJson, type TestApp } from "../helpers/app.ts";
import { authApp, OWN_ORIGIN, signUp } from "./auth-app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const NOT_CREDENTIALS = ["Basic YW5uOnBhc3N3b3Jk", "Bearer not-a-session-token", "Token abc"];

test("reindex: a cookie caller with a stray Authorization header still needs the CSRF token", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const reindex = (headers: Record<string, string>) =>
    (t as TestApp).request("/api/workspace/reindex", postJson({}, headers));
  for (const authorization of NOT_CREDENTIALS) {
    const response = await reindex({ ...OWN_ORIGIN, ...ann.cookie, authorization });
    expect({ authorization, status: response.status }).toEqual({ authorization, status: 403 });
    expect(await response.json()).toEqual({ message: "Invalid CSRF protection" });
  }
  // The real Bearer token skips it, as before.
  expect((await reindex(ann.bearer)).status).toBe(200);
});

test("sandbox settings: the same, before anything is saved", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const save = (headers: Record<string, string>) =>
    (t as TestApp).request("/api/sandbox/settings", postJson({ sandboxApiKey: "sk-planted" }, headers));
  for (const authorization of NOT_CREDENTIALS) {
    const response = await save({ ...OWN_ORIGIN, ...ann.cookie, authorization });
    expect({ authorization, status: response.status }).toEqual({ authorization, status: 403 });
  }
  // Past the CSRF check a local server answers that it needs no key (409): the bearer got that far.
  expect((await save(ann.bearer)).status).toBe(409);
});
