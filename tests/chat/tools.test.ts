/** Tool limits: file tools stay in the owner's workspace; shell commands run on the host only in local mode. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { type Event, lines } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const toolUse = { stopReason: "toolUse" as const };
const results = (events: Event[]) =>
  Object.fromEntries(
    events
      .filter((e) => e.type === "tool" && e.part.output !== undefined)
      .map((e) => [e.part.toolCallId, e.part]),
  );

test("file tools cannot leave the workspace: absolute paths, .., ~ and symlinks out are refused", async () => {
  const workspace = `${t.dataDir}/workspaces/local`;
  mkdirSync(workspace, { recursive: true });
  writeFileSync(`${t.dataDir}/secret.txt`, "host secret");
  symlinkSync(t.dataDir, `${workspace}/escape`);
  writeFileSync(`${workspace}/inside.txt`, "fine");
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall("read", { path: `${t.dataDir}/secret.txt` }, { id: "abs" }),
        fauxToolCall("read", { path: "../../secret.txt" }, { id: "dots" }),
        fauxToolCall("read", { path: "~/.ssh/id_rsa" }, { id: "home" }),
        fauxToolCall("read", { path: "escape/secret.txt" }, { id: "link" }),
        fauxToolCall("write", { path: "../../planted.txt", content: "x" }, { id: "write-out" }),
        fauxToolCall("read", { path: "inside.txt" }, { id: "ok" }),
      ],
      toolUse,
    ),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await t.request("/api/chat", postJson({ message: "look", model: model.id })));
  const r = results(events);
  for (const id of ["abs", "dots", "home", "link", "write-out"]) {
    expect({ id, isError: r[id]?.isError }).toEqual({ id, isError: true });
    expect(JSON.stringify(r[id]?.output)).toContain("outside your workspace");
    expect(JSON.stringify(r[id]?.output)).not.toContain("host secret");
  }
  expect(r.ok?.isError).toBe(false);
  expect(JSON.stringify(r.ok?.output)).toContain("fine");
  expect(await Bun.file(`${t.dataDir}/planted.txt`).exists()).toBe(false);
  model.dispose();
});

test("pi's own `@` and `~` expansion cannot reach the server user's home (agent and plan mode)", async () => {
  const planted = `${homedir()}/atrium-planted-${crypto.randomUUID()}`;
  const calls = (prefix: string) => [
    fauxToolCall("read", { path: "@~/.profile" }, { id: `${prefix}read` }),
    fauxToolCall("ls", { path: "@~" }, { id: `${prefix}ls` }),
    fauxToolCall("grep", { pattern: "PATH", path: "@~" }, { id: `${prefix}grep` }),
    fauxToolCall("find", { pattern: "*", path: "~" }, { id: `${prefix}find` }),
    fauxToolCall("read", { path: "@/etc/hostname" }, { id: `${prefix}abs` }),
  ];
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        ...calls("agent-"),
        fauxToolCall("write", { path: `@~/${planted.split("/").at(-1)}`, content: "x" }, { id: "write" }),
      ],
      toolUse,
    ),
    fauxAssistantMessage("done"),
    fauxAssistantMessage(calls("plan-"), toolUse),
    fauxAssistantMessage("Plan:\n1. Nothing"),
  ]);
  try {
    const agent = results(
      await lines(await t.request("/api/chat", postJson({ message: "home", model: model.id }))),
    );
    const plan = results(
      await lines(await t.request("/api/chat", postJson({ message: "home", mode: "plan", model: model.id }))),
    );
    for (const [id, part] of Object.entries({ ...agent, ...plan }) as [string, Event][]) {
      expect({ id, isError: part.isError }).toEqual({ id, isError: true });
      expect({ id, text: JSON.stringify(part.output) }).toEqual({
        id,
        text: expect.stringContaining("outside your workspace"),
      });
    }
    expect(Object.keys({ ...agent, ...plan })).toHaveLength(11);
    expect(existsSync(planted)).toBe(false);
  } finally {
    rmSync(planted, { force: true });
    model.dispose();
  }
});

test("a symlink the shell makes in the same batch is seen by the next tool's check (bash runs sequentially)", async () => {
  mkdirSync(`${t.dataDir}/elsewhere`, { recursive: true });
  writeFileSync(`${t.dataDir}/elsewhere/secret.txt`, "host secret");
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall("bash", { command: `ln -s ${t.dataDir}/elsewhere made-link` }, { id: "ln" }),
        fauxToolCall("read", { path: "made-link/secret.txt" }, { id: "through" }),
        fauxToolCall("write", { path: "made-link/planted.txt", content: "x" }, { id: "plant" }),
      ],
      toolUse,
    ),
    fauxAssistantMessage("done"),
  ]);
  const r = results(
    await lines(await t.request("/api/chat", postJson({ message: "link", model: model.id }))),
  );
  expect(r.ln?.isError).toBe(false);
  for (const id of ["through", "plant"]) {
    expect({ id, isError: r[id]?.isError }).toEqual({ id, isError: true });
    expect(JSON.stringify(r[id]?.output)).toContain("outside your workspace");
    expect(JSON.stringify(r[id]?.output)).not.toContain("host secret");
  }
  expect(existsSync(`${t.dataDir}/elsewhere/planted.txt`)).toBe(false);
  model.dispose();
});

test("local mode runs shell commands in the workspace", async () => {
  const model = scripted(t, [
    fauxAssistantMessage([fauxToolCall("bash", { command: "pwd" }, { id: "sh" })], toolUse),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await t.request("/api/chat", postJson({ message: "where", model: model.id })));
  expect(JSON.stringify(results(events).sh?.output)).toContain(`${t.dataDir}/workspaces/local`);
  model.dispose();
});

test("the shell never sees the server's secrets: its environment is an allow-list and HOME is the workspace", async () => {
  const canary = "sk-canary-never-in-a-shell";
  const saved = { openai: process.env.OPENAI_API_KEY, auth: process.env.APP_AUTH_SECRET };
  process.env.OPENAI_API_KEY = canary;
  process.env.APP_AUTH_SECRET = canary;
  try {
    const model = scripted(t, [
      fauxAssistantMessage(
        [fauxToolCall("bash", { command: "env; echo HOME=$HOME" }, { id: "sh" })],
        toolUse,
      ),
      fauxAssistantMessage("done"),
    ]);
    const events = await lines(await t.request("/api/chat", postJson({ message: "env", model: model.id })));
    const output = JSON.stringify(results(events).sh?.output);
    expect(output).toContain("PATH=");
    expect(output).toContain(`HOME=${t.dataDir}/workspaces/local`);
    expect(output).not.toContain(canary);
    expect(output).not.toContain("OPENAI_API_KEY");
    model.dispose();
  } finally {
    if (saved.openai === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved.openai;
    if (saved.auth === undefined) delete process.env.APP_AUTH_SECRET;
    else process.env.APP_AUTH_SECRET = saved.auth;
  }
});

test("protected mode without a sandbox refuses shell commands (tests/chat/sandbox.test.ts: with one)", async () => {
  const other = await createTestApp({
    env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", APP_SANDBOX_PROVIDER: "none" },
    resolvers: [() => ({ id: "carol", kind: "bearer" })],
  });
  const model = scripted(other, [
    fauxAssistantMessage([fauxToolCall("bash", { command: "env" }, { id: "sh" })], toolUse),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await other.request("/api/chat", postJson({ message: "env", model: model.id })));
  const sh = results(events).sh;
  expect(sh?.isError).toBe(true);
  expect(JSON.stringify(sh?.output)).toContain("Shell commands are disabled");
  model.dispose();
  await other.close();
});

test("POST /api/post-chat streams the same NDJSON events as /api/chat", async () => {
  const model = scripted(t, [fauxAssistantMessage("companion reply")]);
  const response = await t.request("/api/post-chat", postJson({ message: "hi", model: model.id }));
  expect(response.headers.get("content-type")).toContain("application/x-ndjson");
  const events = await lines(response);
  expect(events[0]?.type).toBe("start");
  expect(
    events
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join(""),
  ).toBe("companion reply");
  expect(events.at(-1)).toMatchObject({ type: "done", runId: events[0]?.runId });
  expect((await t.request("/api/post-chat", postJson({ message: "" }))).status).toBe(400);
  model.dispose();
});

test("over a real socket, a client that disconnects mid-stream aborts the run", async () => {
  const server = listen(t);
  const model = scripted(t, [fauxAssistantMessage("word ".repeat(600))], { tokensPerSecond: 300 });
  const controller = new AbortController();
  const response = await fetch(`${server.url}/api/chat`, {
    ...postJson({ message: "talk", model: model.id }),
    signal: controller.signal,
  });
  const reader = response.body?.getReader();
  const first = new TextDecoder().decode((await reader?.read())?.value);
  const start = JSON.parse(first.split("\n")[0] ?? "{}");
  expect(start.type).toBe("start");
  controller.abort();
  const status = await waitFor(async () => {
    const run = (await t.json<Event>(`/api/chat/provenance?runId=${start.runId}`)).body.status;
    return run !== "running" && run;
  });
  expect(status).toBe("aborted");
  model.dispose();
  await server.stop();
});
