/**
 * The per-user sandbox: preview URLs (the contract's checks and texts, signed, short-lived, owner-bound)
 * and shell commands in protected mode (in the jail when it works, refused when sandboxes are off).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { PREVIEW_LIFETIME_MS, PreviewSigner } from "../../server/sandbox/users/preview.ts";
import { SandboxRegistry } from "../../server/sandbox/users/registry.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { authApp, SECRET, signUp } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("GET /api/sandbox/preview", () => {
  test("401, 503, 400, 404 with the contract's texts, in that order", async () => {
    t = await authApp();
    const anonymous = await t.json("/api/sandbox/preview?port=abc");
    expect(anonymous).toMatchObject({ status: 401, body: { error: "Authentication required" } });
    const ann = await signUp(t, "ann@example.org");
    for (const port of ["0", "65536", "abc", "1.5", "", "-1", "3000x"]) {
      const response = await t.json(`/api/sandbox/preview?port=${port}`, { headers: ann.bearer });
      expect({ port, status: response.status, body: response.body }).toEqual({
        port,
        status: 400,
        body: { error: "Invalid port" },
      });
    }
    // The provider reported the sandbox stopped (its webhook).
    await new SandboxRegistry(t.ctx.database).put(ann.id, "local", "sbx-ann", "stopped");
    const stopped = await t.json("/api/sandbox/preview", { headers: ann.bearer });
    expect(stopped).toMatchObject({ status: 404, body: { error: "No active sandbox for user" } });
  });

  test("local mode: 404, and no long-lived sandbox is started (the agent's commands never run in one there)", async () => {
    t = await createTestApp();
    const response = await t.json("/api/sandbox/preview?port=3000");
    expect(response).toMatchObject({ status: 404, body: { error: "No active sandbox for user" } });
    expect(await new SandboxRegistry(t.ctx.database).of("local")).toBeUndefined();
    expect((await t.json("/api/sandbox/preview?port=0")).status).toBe(400);
  });

  test("503 Sandbox not available when sandboxes are off (checked before the port)", async () => {
    t = await authApp({ env: { APP_SANDBOX_PROVIDER: "none" } });
    const ann = await signUp(t, "ann@example.org");
    const response = await t.json("/api/sandbox/preview?port=abc", { headers: ann.bearer });
    expect(response).toMatchObject({ status: 503, body: { error: "Sandbox not available" } });
  });

  test("a signed URL for the caller only; forged, altered, expired or borrowed URLs are refused", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    const made = await t.json<{ url: string; port: number; expiresAt: string }>("/api/sandbox/preview", {
      headers: ann.bearer,
    });
    expect(made.status).toBe(200);
    expect(made.body.port).toBe(3000);
    expect(Date.parse(made.body.expiresAt) - Date.now()).toBeLessThanOrEqual(PREVIEW_LIFETIME_MS);
    const path = new URL(made.body.url).pathname;
    expect(path).toStartWith("/api/sandbox/preview/");
    const token = path.split("/")[4] as string;

    const follow = (p: string, headers: Record<string, string>) => t?.json(p, { headers });
    // The owner passes every check; nothing answers inside the local jail, which is said plainly.
    expect(await follow(path, ann.bearer)).toMatchObject({ status: 502 });
    expect(await follow(path, bob.bearer)).toMatchObject({
      status: 403,
      body: { error: "Invalid or expired preview URL" },
    });
    // The signed URL is its own credential: a previewed page's requests carry no session cookie.
    expect((await follow(path, {}))?.status).toBe(502);
    const [body, mac] = token.split(".") as [string, string];
    const claim = JSON.parse(Buffer.from(body, "base64url").toString());
    const altered = Buffer.from(JSON.stringify({ ...claim, p: 22 })).toString("base64url");
    const expired = new PreviewSigner(SECRET, () => Date.now() - PREVIEW_LIFETIME_MS - 1000).sign(
      ann.id,
      3000,
    ).token;
    const otherKey = new PreviewSigner("another-secret").sign(ann.id, 3000).token;
    for (const bad of [
      `${altered}.${mac}`,
      `${body}.${mac.slice(1)}`,
      expired,
      otherKey,
      "garbage",
      `${body}.${mac}.x`,
    ]) {
      const response = await follow(`/api/sandbox/preview/${bad}/`, ann.bearer);
      expect({ bad, status: response?.status }).toEqual({ bad, status: 403 });
    }
  });
});

describe("shell commands in protected mode", () => {
  const bashTurn = async (app: TestApp, headers: Record<string, string>) => {
    const model = scripted(app, [
      fauxAssistantMessage(
        [
          fauxToolCall(
            "bash",
            { command: "echo in-sandbox; echo $HOME; env | grep -c SECRET || true" },
            { id: "sh" },
          ),
        ],
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage("done"),
    ]);
    const events = await lines(
      await app.request("/api/chat", postJson({ message: "run", model: model.id }, headers)),
    );
    model.dispose();
    return JSON.stringify(events.filter((e) => e.type === "tool"));
  };

  test("run in the user's sandbox (their workspace, no server secrets) when the jail works", async () => {
    t = await authApp({ env: { ANTHROPIC_API_KEY: "SECRET-provider-key" } });
    const ann = await signUp(t, "ann@example.org");
    const tools = await bashTurn(t, ann.bearer);
    expect(tools).toContain("in-sandbox");
    // HOME is the sandbox user's, the model sees the sandbox's paths.
    expect(tools).toContain("/home/atrium");
    expect(tools).not.toContain("SECRET-provider-key");
    expect(tools).not.toContain("Shell commands are disabled");
  });

  test("are refused with a clear message when sandboxes are off", async () => {
    t = await authApp({ env: { APP_SANDBOX_PROVIDER: "none" } });
    const ann = await signUp(t, "ann@example.org");
    const tools = await bashTurn(t, ann.bearer);
    expect(tools).toContain("Shell commands are disabled on this server");
    expect(tools).not.toContain("in-sandbox\\n");
  });

  test("read, write, edit, ls and bash work in the sandbox at the paths it shows; anything outside is refused", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const home = "/home/atrium/agent-workspace";
    const model = scripted(t, [
      fauxAssistantMessage(
        [
          fauxToolCall("bash", { command: "pwd; id -u" }, { id: "pwd" }),
          fauxToolCall("write", { path: "notes/a.txt", content: "hello sandbox\n" }, { id: "write" }),
          fauxToolCall(
            "edit",
            { path: `${home}/notes/a.txt`, edits: [{ oldText: "hello", newText: "edited" }] },
            { id: "edit" },
          ),
          fauxToolCall("read", { path: "notes/a.txt" }, { id: "read" }),
          fauxToolCall("ls", { path: "notes" }, { id: "ls" }),
          fauxToolCall("bash", { command: "cat notes/a.txt; stat -c %u notes/a.txt" }, { id: "cat" }),
          fauxToolCall("read", { path: "/etc/passwd" }, { id: "outside" }),
          fauxToolCall("write", { path: "../escape.txt", content: "x" }, { id: "dots" }),
          fauxToolCall("write", { path: ".pi/extensions/x.ts", content: "x" }, { id: "pi" }),
          fauxToolCall("grep", { pattern: "x" }, { id: "grep" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    const events = await lines(
      await t.request("/api/chat", postJson({ message: "files", model: model.id }, ann.bearer)),
    );
    model.dispose();
    const outputs = new Map<string, string>();
    for (const e of events as { type: string; part?: { toolCallId: string; state: string } }[])
      if (e.type === "tool" && e.part?.state.startsWith("output"))
        outputs.set(e.part.toolCallId, JSON.stringify(e.part));
    expect(outputs.get("pwd")).toContain(`${home}\\n65534`);
    expect(outputs.get("read")).toContain("edited sandbox");
    expect(outputs.get("ls")).toContain("a.txt");
    expect(outputs.get("cat")).toContain("edited sandbox\\n65534");
    expect(outputs.get("outside")).toContain("is outside your workspace");
    expect(outputs.get("dots")).toContain("is outside your workspace");
    expect(outputs.get("pi")).toContain("in .pi/");
    expect(outputs.get("grep")).toContain("run grep or find with the bash tool");
    // The files are the owner's workspace folder on the host.
    const workspace = ownerFolders(t.dataDir, ann.id).workspace;
    expect(readFileSync(join(workspace, "notes", "a.txt"), "utf8")).toBe("edited sandbox\n");
    expect(existsSync(join(workspace, "..", "escape.txt"))).toBe(false);
  });
});
