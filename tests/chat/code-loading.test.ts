/**
 * Nothing an HTTP client or a model writes becomes code the server loads. The attack measured on the
 * landed server: append a `.ts` file through the Files API (it lands in the workspace), point chat
 * settings' `extensions` at it, send a chat message: pi loaded it into the server process. Here every
 * request goes without an Origin header (curl, an SDK), so no Origin or Host check is what stops it.
 * Each planted extension would write a marker file when loaded; the marker must never appear.
 * A control extension in the owner's agent dir does load, so a missing marker means "not loaded",
 * not "the marker mechanism is broken".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { type Event, lines } from "../helpers/streams.ts";

let t: TestApp;
let workspace: string;
let agentDir: string;
beforeAll(async () => {
  t = await createTestApp();
  workspace = `${t.dataDir}/workspaces/local`;
  agentDir = `${t.dataDir}/pi-agent/local`;
  mkdirSync(workspace, { recursive: true });
});
afterAll(() => t.close());

/** An extension that, when pi loads it, writes `marker` (top-level code and its factory). */
function extensionSource(marker: string): string {
  return `import { writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(marker)}, "loaded");
export default function (pi) { writeFileSync(${JSON.stringify(marker)}, "registered"); }
`;
}

async function chatOnce(message: string): Promise<Event[]> {
  const model = scripted(t, [fauxAssistantMessage("ok")]);
  const events = await lines(await t.request("/api/chat", postJson({ message, model: model.id })));
  model.dispose();
  expect(events.at(-1)?.type).toBe("done");
  return events;
}

test("control: an extension in the owner's agent dir is loaded (the marker works)", async () => {
  const marker = `${t.dataDir}/control-marker`;
  mkdirSync(`${agentDir}/extensions`, { recursive: true });
  writeFileSync(`${agentDir}/extensions/control.ts`, extensionSource(marker));
  await chatOnce("load the agent dir's extensions");
  expect(existsSync(marker)).toBe(true);
});

test("the measured chain with no Origin: Files API .ts + settings extensions + chat never loads it", async () => {
  const marker = `${t.dataDir}/files-api-marker`;
  const appended = await t.request(
    "/api/files/append",
    postJson({ path: "evil.ts", content: extensionSource(marker) }),
  );
  expect(appended.status).toBe(200);
  const planted = `${workspace}/files/evil.ts`;
  expect(existsSync(planted)).toBe(true);
  const entries = [planted, "../../workspaces/local/files/evil.ts", `~/../${planted}`];
  const refusals: Event[] = [];
  for (const entry of entries)
    refusals.push(await t.json<Event>("/api/chat/settings", postJson({ settings: { extensions: [entry] } })));
  const packages = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { packages: [`${workspace}/files`] } }),
  );
  await chatOnce("hello");
  expect(existsSync(marker)).toBe(false);
  // Refused changes are left out (200, so a settings form that sends every field keeps working) and
  // named in diagnostics; the field keeps its value.
  for (const [i, refused] of refusals.entries()) {
    expect({ entry: entries[i], status: refused.status }).toEqual({ entry: entries[i], status: 200 });
    expect(refused.body.diagnostics.join("\n")).toContain("extensions not changed: entry 0:");
    expect(refused.body.diagnostics.join("\n")).toContain("inside your pi agent dir");
    expect(refused.body.effective.extensions).toEqual([]);
    expect(refused.body.project).not.toHaveProperty("extensions");
  }
  expect(packages.status).toBe(200);
  expect(packages.body.diagnostics.join("\n")).toContain("packages not changed");
  const after = (await t.json<Event>("/api/chat/settings")).body;
  expect(after.effective.extensions).toEqual([]);
  expect(after.effective.packages).toEqual([]);
});

test("the workspace's .pi folder is not read for code or settings, whoever wrote it (the shell can)", async () => {
  const discovered = `${t.dataDir}/pi-extensions-marker`;
  const named = `${t.dataDir}/pi-settings-marker`;
  mkdirSync(`${workspace}/.pi/extensions`, { recursive: true });
  writeFileSync(`${workspace}/.pi/extensions/auto.ts`, extensionSource(discovered));
  writeFileSync(`${workspace}/named.ts`, extensionSource(named));
  writeFileSync(
    `${workspace}/.pi/settings.json`,
    JSON.stringify({
      extensions: [`${workspace}/named.ts`],
      packages: ["npm:left-pad"],
      steeringMode: "all",
    }),
  );
  await chatOnce("hello again");
  expect(existsSync(discovered)).toBe(false);
  expect(existsSync(named)).toBe(false);
  const settings = await t.json<Event>("/api/chat/settings");
  expect(settings.body.effective).toMatchObject({
    extensions: [],
    packages: [],
    steeringMode: "one-at-a-time",
  });
  const resources = await t.json<Event>("/api/chat/resources");
  expect(resources.body.extensions.map((e: Event) => e.path)).toEqual(["pi-agent/extensions/control.ts"]);
});

test("the agent's tools cannot write under .pi/ (a scripted model tries write and edit)", async () => {
  const marker = `${t.dataDir}/tool-marker`;
  writeFileSync(`${workspace}/.pi/extensions/existing.ts`, "// placeholder\n");
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall("write", { path: ".pi/extensions/x.ts", content: extensionSource(marker) }, { id: "w" }),
        fauxToolCall("write", { path: "./sub/../.PI/extensions/y.ts", content: "x" }, { id: "case" }),
        fauxToolCall("write", { path: `${workspace}/.pi/settings.json`, content: "{}" }, { id: "abs" }),
        fauxToolCall(
          "edit",
          { path: ".pi/extensions/existing.ts", edits: [{ oldText: "// placeholder", newText: "x" }] },
          { id: "e" },
        ),
        fauxToolCall("read", { path: ".pi/extensions/existing.ts" }, { id: "r" }),
      ],
      { stopReason: "toolUse" },
    ),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await t.request("/api/chat", postJson({ message: "plant", model: model.id })));
  model.dispose();
  await chatOnce("after the attempt");
  expect(existsSync(marker)).toBe(false);
  const results = Object.fromEntries(
    events
      .filter((e) => e.type === "tool" && e.part.output !== undefined)
      .map((e) => [e.part.toolCallId, e.part]),
  );
  for (const id of ["w", "case", "abs", "e"]) {
    expect({ id, isError: results[id]?.isError }).toEqual({ id, isError: true });
    expect(JSON.stringify(results[id]?.output)).toContain("in .pi/");
  }
  expect(results.r?.isError).toBe(false); // reading the folder is harmless
  expect(existsSync(`${workspace}/.pi/extensions/x.ts`)).toBe(false);
  expect(existsSync(`${workspace}/.PI`)).toBe(false);
});

test("local mode: settings may name extensions inside the agent dir, and pi loads them", async () => {
  const marker = `${t.dataDir}/named-in-agent-dir-marker`;
  mkdirSync(`${agentDir}/more`, { recursive: true });
  writeFileSync(`${agentDir}/more/named.ts`, extensionSource(marker));
  const update = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { extensions: ["more/named.ts"] } }),
  );
  expect(update.status).toBe(200);
  expect(update.body.effective.extensions).toEqual(["more/named.ts"]);
  await chatOnce("load the named one");
  expect(existsSync(marker)).toBe(true);
  const npm = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { packages: ["npm:left-pad"] } }),
  );
  expect(npm.status).toBe(200);
  expect(npm.body.diagnostics.join("\n")).toContain("never installed from npm or git");
  expect(npm.body.effective.packages).toEqual([]);
  // Sending a field's current value is no change: no diagnostic (a form resends every field).
  const same = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { extensions: ["more/named.ts"], steeringMode: "all" } }),
  );
  expect(same.status).toBe(200);
  expect(same.body.diagnostics).toEqual([]);
  expect(same.body.effective).toMatchObject({ extensions: ["more/named.ts"], steeringMode: "all" });
});

test("a settings file written before this rule: code entries outside the agent dir are ignored", async () => {
  const marker = `${t.dataDir}/legacy-marker`;
  writeFileSync(`${workspace}/legacy.ts`, extensionSource(marker));
  writeFileSync(
    `${agentDir}/settings.json`,
    JSON.stringify({
      extensions: [`${workspace}/legacy.ts`],
      packages: ["npm:left-pad", "git:github.com/x/y"],
    }),
  );
  const settings = await t.json<Event>("/api/chat/settings");
  expect(settings.body.effective).toMatchObject({ extensions: [], packages: [] });
  await chatOnce("legacy");
  expect(existsSync(marker)).toBe(false);
});

test("grep and find never download ripgrep or fd (pi's offline switch is on)", async () => {
  const fetched: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = Object.assign(
    (input: string | URL | Request, init?: RequestInit) => {
      fetched.push(String(input instanceof Request ? input.url : input));
      return realFetch(input, init);
    },
    { preconnect: realFetch.preconnect },
  );
  try {
    const model = scripted(t, [
      fauxAssistantMessage(
        [
          fauxToolCall("grep", { pattern: "x" }, { id: "g" }),
          fauxToolCall("find", { pattern: "*.ts" }, { id: "f" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    const events = await lines(
      await t.request("/api/chat", postJson({ message: "search", model: model.id })),
    );
    model.dispose();
    expect(events.at(-1)?.type).toBe("done");
    expect(fetched.filter((url) => url.includes("github"))).toEqual([]);
    expect(process.env.PI_OFFLINE).toBe("1");
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("protected mode: settings cannot name extensions or packages at all (left out, named in diagnostics)", async () => {
  const other = await createTestApp({
    env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1" },
    resolvers: [() => ({ id: "carol", kind: "bearer" })],
  });
  const carolAgentDir = `${other.dataDir}/pi-agent/carol`;
  mkdirSync(`${carolAgentDir}/ext`, { recursive: true });
  writeFileSync(`${carolAgentDir}/ext/x.ts`, "export default function () {}\n");
  for (const settings of [{ extensions: ["ext/x.ts"] }, { packages: ["ext"] }]) {
    const refused = await other.json<Event>("/api/chat/settings", postJson({ settings }));
    expect(refused.status).toBe(200);
    expect(refused.body.diagnostics.join("\n")).toContain("protected mode");
    expect(refused.body.effective).toMatchObject({ extensions: [], packages: [] });
    expect(existsSync(`${carolAgentDir}/settings.json`)).toBe(false);
  }
  // A file that names them anyway (an older server wrote it) is not followed either.
  writeFileSync(`${carolAgentDir}/settings.json`, JSON.stringify({ extensions: ["ext/x.ts"] }));
  expect((await other.json<Event>("/api/chat/settings")).body.effective.extensions).toEqual([]);
  await other.close();
});
