/**
 * The terminal client against a team server (session auth on a real port): a 401 says how to sign in;
 * `atrium login` keeps the session token in the config folder, readable by its owner only, and the
 * clients send it; APP_TOKEN overrides it; a wrong password fails with a code; `--sign-out` ends the
 * session on the server and forgets the token.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { runCli } from "../helpers/terminal.ts";
import { tempDir } from "../helpers/tmp.ts";
import { authApp, PASSWORD, signUp } from "./auth-app.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
const config = tempDir("atrium-login-config-");
const env = { XDG_CONFIG_HOME: config.path };
const file = join(config.path, "atrium", "credentials.json");

beforeAll(async () => {
  t = await authApp();
  server = listen(t);
  await signUp(t, "ann@example.org");
});

afterAll(async () => {
  await server.stop();
  await t.close();
  config.remove();
});

const saved = () => JSON.parse(readFileSync(file, "utf8")) as { servers: Record<string, { token: string }> };

describe("atrium login and a team server", () => {
  test("without credentials, the 401 says how to sign in", async () => {
    const run = await runCli(["chat", "--url", server.url, "-m", "hi"], { env });
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `atrium chat: unauthorized: ${server.url} needs you to sign in: run \`atrium login --url ${server.url}\`, or set APP_TOKEN to a bearer token\n`,
    });
  });

  test("a wrong password fails with its code and saves nothing", async () => {
    const run = await runCli(["login", "--url", server.url, "--email", "ann@example.org"], {
      env,
      stdin: "not the password\n",
    });
    expect(run).toMatchObject({
      code: 1,
      stderr: "atrium login: invalid_credentials: Invalid email or password\n",
    });
    expect(existsSync(file)).toBe(false);
  });

  test("login keeps the token (0600, in a 0700 folder); chat and turns send it", async () => {
    const run = await runCli(["login", "--url", server.url], {
      env,
      stdin: `ann@example.org\n${PASSWORD}\n`,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `signed in to ${server.url} as ann@example.org; the session token is in ${file}\n`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config.path, "atrium")).mode & 0o777).toBe(0o700);
    const token = saved().servers[server.url]?.token as string;
    expect(token).toMatch(/^\S+\.\S+$/);

    const replied = await runCli(["chat", "--url", server.url, "-m", "hi"], { env });
    expect(replied.code).toBe(0);
    expect(replied.stdout).toContain("No model is configured");
    // The session belongs to ann: her token lists it.
    const sessionId = replied.stderr.match(/^session (\S+)/)?.[1];
    const listed = await fetch(`${server.url}/api/chat/sessions`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(JSON.stringify(await listed.json())).toContain(String(sessionId));
    const turns = await runCli(["turns", "--url", server.url, "--session", "ses_none", "-m", "hi"], { env });
    expect(turns.stderr).toBe("atrium turns: session_not_found: Session not found\n");
  });

  test("APP_TOKEN overrides the saved token", async () => {
    const run = await runCli(["chat", "--url", server.url, "-m", "hi"], {
      env: { ...env, APP_TOKEN: "forged.token" },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("unauthorized:");
  });

  test("--sign-out ends the session on the server and forgets the token", async () => {
    const token = saved().servers[server.url]?.token as string;
    const run = await runCli(["login", "--url", server.url, "--sign-out"], { env });
    expect(run).toEqual({ code: 0, stdout: `signed out of ${server.url}\n`, stderr: "" });
    expect(saved().servers[server.url]).toBeUndefined();
    const refused = await fetch(`${server.url}/api/chat/sessions`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(401);
  });
});
