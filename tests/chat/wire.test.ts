/**
 * Wire compatibility with the reference client: every chat route's live response (and every NDJSON
 * line of a turn) parses with Atrium's own response schemas (schemas/chat.ts, the ones Elysia validates
 * and Swagger documents) and with that client's contract (fixtures/origin-contract.ts, zod), so a client
 * built on the reference client's protocol can switch to Atrium unchanged. Paths never reveal the server's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import {
  type Context,
  fauxAssistantMessage,
  fauxText,
  fauxThinking,
  fauxToolCall,
} from "@mariozechner/pi-ai";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { z } from "zod";
import * as schemas from "../../schemas/chat.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { type Event, eventReader, lines } from "../helpers/streams.ts";
import * as origin from "./fixtures/origin-contract.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { AWS_ACCESS_KEY_ID: "AKIA-test" } });
  const agentDir = `${t.dataDir}/pi-agent/local`;
  mkdirSync(`${agentDir}/skills/tidy`, { recursive: true });
  writeFileSync(`${agentDir}/skills/tidy/SKILL.md`, "---\nname: tidy\ndescription: Tidy up\n---\nTidy.\n");
  mkdirSync(`${agentDir}/prompts`, { recursive: true });
  writeFileSync(
    `${agentDir}/prompts/review.md`,
    "---\ndescription: Review\nargument-hint: <path>\n---\nReview $1\n",
  );
  mkdirSync(`${agentDir}/themes`, { recursive: true });
  mkdirSync(`${t.dataDir}/workspaces/local`, { recursive: true });
  writeFileSync(`${t.dataDir}/workspaces/local/AGENTS.md`, "# Rules\n");
});
afterAll(() => t.close());

/** Parses with both; a failure lists every mismatch. Extra keys pass the reference client's plain objects. */
function conforms(value: unknown, schema: TSchema, contract: z.ZodType): void {
  const ours = [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);
  expect(ours).toEqual([]);
  const parsed = contract.safeParse(value);
  const theirs = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  expect(theirs).toEqual([]);
  expect(JSON.stringify(value)).not.toContain(t.dataDir);
}

/** The client validates every event but delta and thinking; Atrium's lines all validate anyway. */
function conformsStream(events: Event[]): void {
  for (const event of events) conforms(event, schemas.ChatStreamEvent, origin.streamEvent);
}

const toolUse = { stopReason: "toolUse" as const };

test("POST /api/chat: every line (start, thinking, delta, tool, done) and done.message as UI message", async () => {
  const model = scripted(
    t,
    [
      fauxAssistantMessage(
        [fauxThinking("look first"), fauxToolCall("read", { path: "AGENTS.md" }, { id: "r1" })],
        toolUse,
      ),
      fauxAssistantMessage([fauxText("It says: Rules.")]),
    ],
    { reasoning: true },
  );
  const events = await lines(
    await chat(t, {
      message: "read it",
      model: { provider: model.id.split("/")[0], id: "scripted", thinkingLevel: "max" },
      // What the reference client sends besides: the server ignores them.
      mode: "agent",
      userId: "spoofed",
    }),
  );
  model.dispose();
  conformsStream(events);
  expect(new Set(events.map((e) => e.type))).toEqual(new Set(["start", "thinking", "tool", "delta", "done"]));
  const done = events.at(-1);
  expect(done?.message.id).toBe(done?.runId);
  expect(done?.message.parts).toMatchObject([
    { type: "tool-Thinking", toolCallId: `${done?.runId}-thinking-0`, state: "output-available" },
    {
      type: "tool-Read",
      toolCallId: "r1",
      state: "output-available",
      input: { path: "AGENTS.md", file_path: "AGENTS.md" },
      output: { content: "# Rules\n" },
    },
    { type: "text", text: "It says: Rules." },
  ]);
});

test("POST /api/chat: error, retry, plan and queue lines", async () => {
  await t.json(
    "/api/chat/settings",
    postJson({ settings: { retry: { enabled: true, maxRetries: 1, baseDelayMs: 1 } } }),
  );
  const failing = scripted(t, [
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 service unavailable" }),
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 service unavailable" }),
  ]);
  const failed = await lines(await chat(t, { message: "flaky", model: failing.id }));
  failing.dispose();
  conformsStream(failed);
  expect(failed.map((e) => e.type)).toEqual(expect.arrayContaining(["retry", "error"]));

  const planner = scripted(t, [fauxAssistantMessage("Plan:\n1. One\n2. Two")]);
  const planned = await lines(await chat(t, { message: "plan", mode: "plan", model: planner.id }));
  planner.dispose();
  conformsStream(planned);
  expect(planned.some((e) => e.type === "plan")).toBe(true);

  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = scripted(t, [
    async (_context: Context) => {
      await gate;
      return fauxAssistantMessage("first");
    },
    fauxAssistantMessage("second"),
  ]);
  const reader = eventReader(await chat(t, { message: "one", model: slow.id }));
  const start = await reader.until((e) => e.type === "start");
  const queued = await lines(
    await chat(t, { message: "two", sessionId: start.sessionId, streamingBehavior: "followUp" }),
  );
  release();
  conformsStream(queued);
  expect(queued.map((e) => e.type)).toEqual(["queue"]);
  conformsStream([start, ...(await reader.rest())]);
  slow.dispose();
});

test("POST /api/chat/new, /api/chat/resume and GET /api/chat/session answer session responses", async () => {
  const created = await t.json<Event>("/api/chat/new", { method: "POST" });
  conforms(created.body, schemas.NewSession, origin.sessionResponse);
  expect(created.body).toMatchObject({ session: { sessionId: created.body.sessionId }, messages: [] });

  const model = scripted(t, [
    fauxAssistantMessage([fauxToolCall("read", { path: "AGENTS.md" }, { id: "h1" })], toolUse),
    fauxAssistantMessage("Done reading."),
  ]);
  const events = await lines(await chat(t, { message: "hydrate me", model: model.id }));
  model.dispose();
  const { sessionId, sessionFile } = events[0] ?? {};
  const resumed = await t.json<Event>("/api/chat/resume", postJson({ sessionId }));
  conforms(resumed.body, schemas.Hydrated, origin.sessionResponse);
  expect(resumed.body.messages).toMatchObject([
    { role: "user", parts: [{ type: "text", text: "hydrate me" }], createdAt: expect.any(Number) },
    {
      role: "assistant",
      parts: [
        { type: "tool-Read", toolCallId: "h1", state: "output-available", output: { content: "# Rules\n" } },
        { type: "text", text: "Done reading." },
      ],
    },
  ]);
  const hydrated = await t.json<Event>(`/api/chat/session?sessionFile=${sessionFile}`);
  conforms(hydrated.body, schemas.Hydrated, origin.sessionResponse);
  expect(hydrated.body.messages).toEqual(resumed.body.messages);
  const lost = await t.json<Event>("/api/chat/resume", postJson({ sessionId: "gone" }));
  conforms(lost.body, schemas.Hydrated, origin.sessionResponse);
  expect(lost.body.sessionReset).toBe(true);
});

test("GET /api/chat/sessions: path, id, cwd, created, modified, messageCount, firstMessage", async () => {
  const model = scripted(t, [fauxAssistantMessage("Listed.")]);
  const events = await lines(await chat(t, { message: "  list me  ", model: model.id }));
  model.dispose();
  const { body } = await t.json<Event>("/api/chat/sessions");
  conforms(body, schemas.SessionList, origin.sessionsResponse);
  const entry = body.sessions.find((s: Event) => s.id === events[0]?.sessionId);
  expect(entry).toMatchObject({
    path: events[0]?.sessionFile,
    cwd: "workspace",
    messageCount: 2,
    firstMessage: "list me",
    sessionFile: events[0]?.sessionFile,
  });
  // The reference client resumes a listed session with {sessionFile: path, sessionId: id}.
  const resumed = await t.json<Event>(
    "/api/chat/resume",
    postJson({ sessionFile: entry.path, sessionId: entry.id }),
  );
  expect(resumed.body).toMatchObject({ sessionReset: false, session: { sessionId: entry.id } });
  expect(new Date(entry.created).toISOString()).toBe(entry.created);
  expect(new Date(entry.modified).toISOString()).toBe(entry.modified);
});

test("GET /api/chat/models and POST /api/chat/models/discover: catalog entries", async () => {
  const models = await t.json<Event>("/api/chat/models");
  conforms(models.body, schemas.Models, origin.modelsResponse);
  expect(models.body.models.some((m: Event) => m.key === models.body.selectedModelKey)).toBe(true);

  const discovered = await t.json<Event>(
    "/api/chat/models/discover",
    postJson({ providerId: "amazon-bedrock" }),
  );
  expect(discovered.status).toBe(200);
  conforms(discovered.body, schemas.Discovered, origin.discoverResponse);
  expect(discovered.body.providerId).toBe("amazon-bedrock");
  expect(discovered.body.models.length).toBeGreaterThan(0);
  const viaQuery = await t.json<Event>("/api/chat/models/discover?provider=amazon-bedrock");
  expect(viaQuery.body.providerId).toBe("amazon-bedrock");
  expect((await t.json("/api/chat/models/discover", postJson({ providerId: "nosuch" }))).status).toBe(400);
});

test("GET /api/chat/resources and /api/chat/commands", async () => {
  const resources = await t.json<Event>("/api/chat/resources");
  conforms(resources.body, schemas.Resources, origin.resourcesResponse);
  expect(resources.body.agentsFiles).toMatchObject([{ name: "AGENTS.md", path: "workspace/AGENTS.md" }]);
  expect(resources.body.skills).toMatchObject([{ name: "tidy", path: "pi-agent/skills/tidy/SKILL.md" }]);
  const commands = await t.json<Event>("/api/chat/commands");
  conforms(commands.body, schemas.Commands, origin.commandsResponse);
});

test("GET, POST and PATCH /api/chat/settings answer the same shape; refused code fields keep the form working", async () => {
  const read = await t.json<Event>("/api/chat/settings");
  conforms(read.body, schemas.SettingsUpdated, origin.settingsResponse);
  // The reference client's resources form sends every field copied from effective, plus a refused extension.
  const form = { ...read.body.effective, extensions: ["/etc/evil.ts"], defaultThinkingLevel: "max" };
  const patched = await t.json<Event>("/api/chat/settings", {
    ...postJson({ settings: form }),
    method: "PATCH",
  });
  expect(patched.status).toBe(200);
  conforms(patched.body, schemas.SettingsUpdated, origin.settingsResponse);
  expect(patched.body.effective.extensions).toEqual([]);
  expect(patched.body.diagnostics).toEqual([expect.stringContaining("extensions not changed")]);
  expect(patched.body.effective.defaultThinkingLevel).toBe("xhigh");
  const posted = await t.json<Event>("/api/chat/settings", postJson({ settings: { transport: "sse" } }));
  conforms(posted.body, schemas.SettingsUpdated, origin.settingsResponse);
  expect(posted.body.projectPath).toBe("pi-agent/settings.json");
  // What the reference client would refuse in an answer cannot be saved: blank entries, zero token counts.
  for (const settings of [{ skills: ["  "] }, { enabledModels: [""] }, { compaction: { reserveTokens: 0 } }])
    expect((await t.json("/api/chat/settings", postJson({ settings }))).status).toBe(400);
});

test("GET, POST and DELETE /api/chat/providers", async () => {
  const listed = await t.json<Event>("/api/chat/providers");
  conforms(listed.body, schemas.Providers, origin.providersResponse);
  const stored = await t.json<Event>(
    "/api/chat/providers",
    postJson({ providerId: "mistral", apiKey: "m-key" }),
  );
  conforms(stored.body, schemas.ProviderUpdated, origin.providerUpdateResponse);
  expect(stored.body.providers.find((p: Event) => p.id === "mistral")?.isConfigured).toBe(true);
  const removed = await t.json<Event>("/api/chat/providers", {
    ...postJson({ providerId: "mistral" }),
    method: "DELETE",
  });
  conforms(removed.body, schemas.ProviderUpdated, origin.providerUpdateResponse);
  expect(removed.body.providers.find((p: Event) => p.id === "mistral")?.isConfigured).toBe(false);
});

test("POST /api/chat/question answers the reference client's question response", async () => {
  const model = scripted(t, [
    fauxAssistantMessage(
      [fauxToolCall("questionnaire", { question: "Yes?", kind: "text" }, { id: "qq" })],
      toolUse,
    ),
    fauxAssistantMessage("ok"),
  ]);
  const reader = eventReader(await chat(t, { message: "ask", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  const asked = await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  conforms(asked, schemas.ChatStreamEvent, origin.streamEvent);
  const answered = await t.json<Event>(
    "/api/chat/question",
    postJson({ sessionId: start.sessionId, toolCallId: "qq", answer: { kind: "text", text: "yes" } }),
  );
  conforms(answered.body, schemas.QuestionAnswered, origin.questionAnswerResponse);
  conformsStream([start, asked, ...(await reader.rest())]);
  model.dispose();
});

test("the reference client's routes are documented in the OpenAPI document beside Atrium's own", async () => {
  const { body } = await t.json<{ paths: Record<string, Record<string, Event>> }>("/swagger/json");
  const documented = (path: string) => Object.keys(body.paths[path] ?? {});
  expect(documented("/api/chat/settings")).toEqual(expect.arrayContaining(["get", "post", "patch"]));
  expect(documented("/api/chat/models/discover")).toEqual(expect.arrayContaining(["get", "post"]));
  expect(documented("/api/chat/providers")).toEqual(expect.arrayContaining(["get", "post", "delete"]));
  // Response shapes are documented too, not left open.
  const models = body.paths["/api/chat/models"]?.get?.responses?.["200"];
  expect(JSON.stringify(models)).toContain("selectedModelKey");
  expect(JSON.stringify(models)).toContain("contextWindow");
});

test("a reply that failed hydrates as an error part, without the server's paths", async () => {
  await t.json("/api/chat/settings", postJson({ settings: { retry: { enabled: false } } }));
  const model = scripted(t, [
    fauxAssistantMessage("", { stopReason: "error", errorMessage: `ENOENT: ${t.dataDir}/pi-agent/local/x` }),
  ]);
  const events = await lines(await chat(t, { message: "fail", model: model.id }));
  model.dispose();
  expect(events.at(-1)?.type).toBe("error");
  const resumed = await t.json<Event>("/api/chat/resume", postJson({ sessionId: events[0]?.sessionId }));
  conforms(resumed.body, schemas.Hydrated, origin.sessionResponse);
  expect(resumed.body.messages.at(-1)?.parts).toEqual([
    { type: "error", title: "Model error", message: "ENOENT: pi-agent/x" },
  ]);
});

test("the reference client's write methods are refused from a foreign Origin like every other write", async () => {
  const foreign = { origin: "https://evil.example" };
  const before = await t.json<Event>("/api/chat/settings");
  const patch = await t.request("/api/chat/settings", {
    ...postJson({ settings: { steeringMode: "all", transport: "websocket" } }, foreign),
    method: "PATCH",
  });
  expect(patch.status).toBe(403);
  expect((await t.json<Event>("/api/chat/settings")).body).toEqual(before.body);
  await t.json("/api/chat/providers", postJson({ providerId: "mistral", apiKey: "kept" }));
  const remove = await t.request("/api/chat/providers", {
    ...postJson({ providerId: "mistral" }, foreign),
    method: "DELETE",
  });
  expect(remove.status).toBe(403);
  const listed = await t.json<Event>("/api/chat/providers");
  expect(listed.body.providers.find((p: Event) => p.id === "mistral")?.isConfigured).toBe(true);
});
