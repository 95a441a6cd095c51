/**
 * Access tokens from the command line, against a team server on a real port: `atrium token
 * create|list|revoke` with the session `atrium login` saved (a token alone cannot manage tokens), and
 * `atrium user token ...` on the server's data dir for an admin acting on any account, whose revocation
 * a running server honours at once and whose open WebSocket closes.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { userCommandMain as userMain } from "../../server/user-command.ts";
import { chat as socketChat } from "../helpers/agents.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { runCli } from "../helpers/terminal.ts";
import { tempDir } from "../helpers/tmp.ts";
import { authApp, databaseEnvOf, PASSWORD, type SignedUser, signUp } from "./auth-app.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let ann: SignedUser;
const config = tempDir("atrium-token-config-");
const env = { XDG_CONFIG_HOME: config.path };

beforeAll(async () => {
  t = await authApp();
  server = listen(t);
  ann = await signUp(t, "ann@example.org");
});

afterAll(async () => {
  await server.stop();
  await t.close();
  config.remove();
});

const sessions = (token: string) =>
  fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });

async function user(args: string[]) {
  let out = "";
  let err = "";
  const code = await userMain(
    [...args, "--data-dir", t.dataDir],
    {
      out: (text) => {
        out += text;
      },
      err: (text) => {
        err += text;
      },
      readStdin: async () => "",
    },
    { ...process.env, ...databaseEnvOf(t) },
  );
  return { code, out, err };
}

describe("atrium token", () => {
  test("create prints the token alone on stdout; list shows it without it; revoke refuses it at once", async () => {
    const login = await runCli(["login", "--url", server.url, "--email", "ann@example.org"], {
      env,
      stdin: `${PASSWORD}\n`,
    });
    expect(login.code).toBe(0);
    const created = await runCli(
      [
        "token",
        "create",
        "--url",
        server.url,
        "--name",
        "nightly job",
        "--scope",
        "turns:read",
        "--days",
        "7",
      ],
      { env },
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^atr_[a-z2-7]{24}_[a-z2-7]{32}$/);
    expect(created.stderr).toContain("shown only now");
    expect((await sessions(token)).status).toBe(200);

    const listed = await runCli(["token", "list", "--url", server.url], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("nightly job\tturns:read");
    expect(listed.stdout).not.toContain(token.split("_")[2] as string);
    const id = listed.stdout.split("\n")[1]?.split("\t")[0] as string;

    const revoked = await runCli(["token", "revoke", id, "--url", server.url], { env });
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    expect((await sessions(token)).status).toBe(401);
    const again = await runCli(["token", "revoke", id, "--url", server.url], { env });
    expect(again).toMatchObject({ code: 1, stderr: "atrium token: not_found: No such token\n" });
  });

  test("an unknown scope and a token as the credential are refused with their reasons", async () => {
    const bad = await runCli(["token", "create", "--url", server.url, "--name", "x", "--scope", "root"], {
      env,
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`"chat", "chat:read"`);
    const own = await t.json<{ token: string }>(
      "/api/auth/tokens",
      postJson({ name: "t", scopes: ["chat"] }, ann.bearer),
    );
    const withToken = await runCli(["token", "list", "--url", server.url], {
      env: { ...env, APP_TOKEN: own.body.token },
    });
    expect(withToken.code).toBe(1);
    expect(withToken.stderr).toContain("managed by a signed-in user");
  });
});

describe("atrium user token", () => {
  test("an admin creates, lists and revokes any account's tokens; the running server follows at once", async () => {
    const created = await user(["token", "create", "ann@example.org", "--name", "ops", "--scope", "agents"]);
    expect(created.code).toBe(0);
    const token = created.out.match(/token: (\S+)/)?.[1] as string;
    const id = created.out.match(/id: (\S+)/)?.[1] as string;
    expect(token).toStartWith("atr_");

    const agent = await fetch(
      `${server.url}/v1/agents`,
      postJson({ name: "Helper", role: "helps" }, { authorization: `Bearer ${token}` }),
    );
    expect(agent.status).toBe(200);
    const { id: agentId } = (await agent.json()) as { id: string };
    const socket = await socketChat(server.url, {
      target_id: agentId,
      target_type: "agent",
      auth_token: token,
    });
    await socket.next((f) => f.type === "connected");

    const listed = await user(["token", "list", "ann@example.org"]);
    expect(listed.out).toContain(`${id}\tops\tagents`);
    const revoked = await user(["token", "revoke", "ann@example.org", id]);
    expect(revoked).toMatchObject({ code: 0, out: `revoked ${id}\n` });
    expect(
      (await fetch(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
    // Revoked in another database connection (as another process would): the socket closes on the re-check.
    expect((await socket.closed).code).toBe(4401);

    const unknown = await user(["token", "list", "nobody@example.org"]);
    expect(unknown).toMatchObject({
      code: 1,
      err: "atrium user: no account with the email nobody@example.org\n",
    });
    const noScope = await user(["token", "create", "ann@example.org", "--name", "x"]);
    expect(noScope.code).toBe(1);
    expect(noScope.err).toContain("Scopes are");
  });
});
