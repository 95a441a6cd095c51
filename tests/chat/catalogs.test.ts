/** Catalog routes: models, discovery, providers (stored keys, env wins), commands, resources, settings. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { ProviderId } from "../../schemas/chat.ts";
import { PROVIDERS } from "../../server/models/catalog.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import type { Event } from "../helpers/streams.ts";

// A local server speaking Ollama's /api/tags.
const ollama = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (request) =>
    new URL(request.url).pathname === "/api/tags"
      ? Response.json({ models: [{ name: "llama3.2:latest" }, { name: "qwen3:4b" }] })
      : new Response("no", { status: 404 }),
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    env: { OLLAMA_BASE_URL: `http://127.0.0.1:${ollama.port}`, GROQ_API_KEY: "gsk-env" },
  });
});
afterAll(async () => {
  await t.close();
  ollama.stop(true);
});

test("models: the configured providers' models, the selected default and diagnostics", async () => {
  const model = scripted(t, []);
  const { status, body } = await t.json<Event>("/api/chat/models");
  expect(status).toBe(200);
  // key is provider/id, what a request names; id is the model's id within its provider.
  expect(body.models.map((m: { key: string }) => m.key)).toEqual(
    expect.arrayContaining([model.id, "offline/offline"]),
  );
  expect(body.models.find((m: { key: string }) => m.key === model.id)).toEqual({
    key: model.id,
    provider: model.id.split("/")[0],
    id: "scripted",
    name: expect.any(String),
    reasoning: false,
    input: ["text", "image"],
    contextWindow: expect.any(Number),
    maxTokens: expect.any(Number),
    thinkingLevels: ["off"],
    available: true,
    defaultThinkingLevel: "medium",
  });
  // The levels come from the model catalog: only a model that has the highest lists it.
  const levels = (key: string) => body.models.find((m: { key: string }) => m.key === key)?.thinkingLevels;
  const groq = body.models.find(
    (m: { provider: string; reasoning: boolean }) => m.provider === "groq" && m.reasoning,
  );
  expect(levels(groq.key)).toEqual(["off", "minimal", "low", "medium", "high"]);
  // What Ollama has pulled is listed too.
  expect(body.models.map((m: { key: string }) => m.key)).toEqual(
    expect.arrayContaining(["ollama/llama3.2:latest", "ollama/qwen3:4b"]),
  );
  expect(body.models.some((m: { provider: string }) => m.provider === "groq")).toBe(true);
  expect(body).toMatchObject({ defaultThinkingLevel: "medium", diagnostics: [] });
  expect(body.selectedModelKey).toBe(`${body.defaultProvider}/${body.defaultModel}`);

  expect(
    (
      await t.json(
        "/api/chat/settings",
        postJson({ settings: { defaultProvider: model.id.split("/")[0], defaultModel: "scripted" } }),
      )
    ).status,
  ).toBe(200);
  const chosen = await t.json<Event>("/api/chat/models");
  expect(chosen.body.selectedModelKey).toBe(model.id);
  model.dispose();
});

test("discover: Ollama's local tags, and a clear diagnostic when a provider is unreachable", async () => {
  const found = await t.json<Event>("/api/chat/models/discover?provider=ollama");
  expect(found.status).toBe(200);
  expect(found.body).toMatchObject({ provider: "ollama", reachable: true, diagnostics: [] });
  expect(found.body.models.map((m: { id: string }) => m.id)).toEqual(["llama3.2:latest", "qwen3:4b"]);

  const closed = Bun.serve({ port: 0, fetch: () => new Response("") });
  const port = closed.port;
  closed.stop(true);
  const other = await createTestApp({ env: { OLLAMA_BASE_URL: `http://127.0.0.1:${port}` } });
  const down = await other.json<Event>("/api/chat/models/discover?provider=ollama");
  expect(down.status).toBe(200);
  expect(down.body).toMatchObject({ provider: "ollama", reachable: false, models: [] });
  expect(down.body.diagnostics[0]).toContain("unreachable");
  const unset = await other.json<Event>("/api/chat/models/discover?provider=openai");
  expect(unset.body.diagnostics[0]).toContain("OPENAI_API_KEY");
  await other.close();
});

test("providers: the eight; a stored key marks one configured, is never echoed, reaches the runtime; env wins", async () => {
  const list = await t.json<{ providers: Event[] }>("/api/chat/providers");
  expect(list.body.providers.map((p) => p.id)).toEqual([
    "amazon-bedrock",
    "openai",
    "anthropic",
    "google-vertex",
    "google",
    "mistral",
    "groq",
    "ollama",
  ]);
  expect(list.body.providers.find((p) => p.id === "openai")).toEqual({
    id: "openai",
    name: "OpenAI",
    envVarName: "OPENAI_API_KEY",
    configured: false,
    isConfigured: false,
  });

  const stored = await t.request(
    "/api/chat/providers",
    postJson({ provider: "openai", apiKey: "sk-stored-secret" }),
  );
  const text = await stored.text();
  expect(stored.status).toBe(200);
  expect(text).not.toContain("sk-stored-secret");
  expect(JSON.parse(text)).toMatchObject({
    success: true,
    reloadRequired: false,
    ok: true,
    stored: true,
    envOverrides: false,
    provider: { id: "openai", configured: true, isConfigured: true },
  });
  expect(JSON.parse(text).providers).toHaveLength(8);
  const row = await t.ctx.database.get(
    "SELECT api_key FROM chat_provider_keys WHERE owner_id = 'local' AND provider = 'openai'",
  );
  expect(row).toEqual({ api_key: "sk-stored-secret" });

  // The runtime uses it: a session's pi auth resolves the stored key; for groq the env variable wins.
  await t.request("/api/chat/providers", postJson({ provider: "groq", apiKey: "gsk-stored" }));
  const { sessionId } = (await t.json<{ sessionId: string }>("/api/chat/new", { method: "POST" })).body;
  const live = t.family("chat").runtime.host.find("local", { sessionId });
  expect(await live?.auth.authStorage.getApiKey("openai")).toBe("sk-stored-secret");
  expect(await live?.auth.authStorage.getApiKey("groq")).toBe("gsk-env");
  const groq = await t.json<Event>(
    "/api/chat/providers",
    postJson({ provider: "groq", apiKey: "gsk-stored" }),
  );
  expect(groq.body.envOverrides).toBe(true);

  const cleared = await t.json<Event>("/api/chat/providers", postJson({ provider: "openai", apiKey: null }));
  expect(cleared.body).toMatchObject({ stored: false, provider: { configured: false } });
  // The reference client's forms: {providerId, apiKey} stores, DELETE with {providerId} clears.
  const again = await t.json<Event>(
    "/api/chat/providers",
    postJson({ providerId: "openai", apiKey: "sk-again" }),
  );
  expect(again.body).toMatchObject({ success: true, stored: true, provider: { isConfigured: true } });
  expect(await live?.auth.authStorage.getApiKey("openai")).toBe("sk-again");
  const removed = await t.json<Event>("/api/chat/providers", {
    ...postJson({ providerId: "openai" }),
    method: "DELETE",
  });
  expect(removed.status).toBe(200);
  expect(removed.body).toMatchObject({ success: true, stored: false, provider: { isConfigured: false } });
  expect(await live?.auth.authStorage.getApiKey("openai", { includeFallback: false })).toBeUndefined();
  const neither = await t.json<Event>("/api/chat/providers", postJson({ apiKey: "x" }));
  expect(neither.status).toBe(400);
  expect(await live?.auth.authStorage.getApiKey("openai", { includeFallback: false })).toBeUndefined();
});

test("the schema's provider ids are exactly the catalog's eight, in its order", () => {
  expect(ProviderId.anyOf.map((literal): string => literal.const)).toEqual(PROVIDERS.map((p) => p.id));
});

test("commands and resources come from pi's resource loader over the owner's folders", async () => {
  const agentDir = `${t.dataDir}/pi-agent/local`;
  const workspace = `${t.dataDir}/workspaces/local`;
  mkdirSync(`${agentDir}/skills/tidy`, { recursive: true });
  writeFileSync(
    `${agentDir}/skills/tidy/SKILL.md`,
    "---\nname: tidy\ndescription: Tidy the workspace\n---\nTidy up.\n",
  );
  mkdirSync(`${agentDir}/prompts`, { recursive: true });
  writeFileSync(
    `${agentDir}/prompts/review.md`,
    "---\ndescription: Review the changes\nargument-hint: <path>\n---\nReview $1\n",
  );
  writeFileSync(`${workspace}/AGENTS.md`, "# Rules\nBe brief.\n");

  const commands = await t.json<{ commands: Event[] }>("/api/chat/commands");
  expect(commands.status).toBe(200);
  const byName = Object.fromEntries(commands.body.commands.map((c) => [c.name, c]));
  for (const name of ["model", "models", "scoped-models", "settings", "new", "session", "config"])
    expect(byName[name]?.source).toBe("builtin");
  expect(byName["skill:tidy"]).toMatchObject({
    source: "skill",
    passThrough: true,
    description: "Tidy the workspace",
  });
  expect(byName.review).toMatchObject({
    source: "prompt",
    passThrough: true,
    description: "Review the changes",
  });

  const resources = await t.json<Event>("/api/chat/resources");
  expect(resources.body.skills.map((s: Event) => s.name)).toEqual(["tidy"]);
  expect(resources.body.prompts.map((p: Event) => p.name)).toEqual(["review"]);
  // Paths relative to the owner's folders, never the server's absolute paths.
  expect(resources.body.agentsFiles.map((f: Event) => f.path)).toEqual(["workspace/AGENTS.md"]);
  expect(resources.body.skills.map((s: Event) => s.filePath)).toEqual(["pi-agent/skills/tidy/SKILL.md"]);
  expect(JSON.stringify(resources.body)).not.toContain(t.dataDir);
  expect(resources.body).toMatchObject({ packages: [], extensions: [], diagnostics: [] });

  const update = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { enableSkillCommands: false } }),
  );
  expect(update.body.updateImpact).toEqual({ newSessionRecommended: true, resourceReloadRequired: true });
  const fewer = await t.json<{ commands: Event[] }>("/api/chat/commands");
  expect(fewer.body.commands.every((c) => c.source === "builtin")).toBe(true);
});

test("settings: pi's defaults, a partial update merges into the owner's settings file in their agent dir", async () => {
  // GET answers what an update answers.
  const before = await t.json<Event>("/api/chat/settings");
  expect(before.body).toMatchObject({
    diagnostics: [],
    project: {},
    projectPath: "pi-agent/settings.json",
    updateImpact: { newSessionRecommended: false, resourceReloadRequired: false },
  });
  expect(before.body.effective).toMatchObject({
    transport: "auto", // pi 0.73's default
    steeringMode: "one-at-a-time",
    followUpMode: "one-at-a-time",
    retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000 },
  });
  // Unset optional settings are left out, never null.
  expect(JSON.stringify(before.body)).not.toContain("null");
  const update = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { steeringMode: "all", compaction: { reserveTokens: 9000 } } }),
  );
  expect(update.status).toBe(200);
  expect(update.body.projectPath).toBe("pi-agent/settings.json");
  expect(await Bun.file(`${t.dataDir}/pi-agent/local/settings.json`).json()).toMatchObject({
    steeringMode: "all",
  });
  expect(update.body.project).toMatchObject({ steeringMode: "all", compaction: { reserveTokens: 9000 } });
  expect(update.body.effective).toMatchObject({
    steeringMode: "all",
    compaction: { enabled: true, reserveTokens: 9000, keepRecentTokens: 20000 },
  });
  expect(update.body.updateImpact).toEqual({ newSessionRecommended: true, resourceReloadRequired: false });
  expect(update.body.diagnostics).toEqual([]);
  const bad = await t.json<Event>(
    "/api/chat/settings",
    postJson({ settings: { defaultProvider: "openai", defaultModel: "no-such-model" } }),
  );
  expect(bad.body.diagnostics[0]).toContain("no-such-model");
  expect((await t.json<Event>("/api/chat/settings")).body.effective.steeringMode).toBe("all");
  // PATCH is the same update; the reference client's `max` thinking level is pi's highest; enabledModels: null
  // removes the override.
  const patched = await t.json<Event>("/api/chat/settings", {
    ...postJson({ settings: { defaultThinkingLevel: "max", enabledModels: ["groq/*"] } }),
    method: "PATCH",
  });
  expect(patched.status).toBe(200);
  expect(patched.body.effective).toMatchObject({ defaultThinkingLevel: "xhigh", enabledModels: ["groq/*"] });
  const cleared = await t.json<Event>("/api/chat/settings", {
    ...postJson({ settings: { enabledModels: null } }),
    method: "PATCH",
  });
  expect(cleared.body.effective).not.toHaveProperty("enabledModels");
  expect(cleared.body.project).not.toHaveProperty("enabledModels");
});
