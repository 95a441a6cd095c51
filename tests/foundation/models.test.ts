/** server/models: the catalog, ids, default resolution, the offline model, scripted runs. */
import { describe, expect, test } from "bun:test";
import {
  type AssistantMessageEvent,
  fauxAssistantMessage,
  fauxText,
  fauxThinking,
  fauxToolCall,
} from "@mariozechner/pi-ai";
import { createEnvSource } from "../../server/config/env.ts";
import { PROVIDERS } from "../../server/models/catalog.ts";
import { parseModelId } from "../../server/models/ids.ts";
import { chunkText, offlineReply } from "../../server/models/offline.ts";
import { ModelService, UnknownModelError } from "../../server/models/service.ts";
import { scriptedModel } from "../helpers/faux.ts";

const service = (env: Record<string, string> = {}) => new ModelService(createEnvSource(env));
const user = (text: string) => ({ messages: [{ role: "user" as const, content: text, timestamp: 0 }] });

async function collect(stream: AsyncIterable<AssistantMessageEvent>) {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("catalog", () => {
  test("lists the eight providers with their variables; configured means the variable is set", () => {
    const providers = service({
      GROQ_API_KEY: "gsk-test",
      OLLAMA_BASE_URL: "http://127.0.0.1:11434",
    }).providers();
    expect(providers.map((p) => [p.id, p.envVarName, p.configured])).toEqual([
      ["amazon-bedrock", "AWS_ACCESS_KEY_ID", false],
      ["openai", "OPENAI_API_KEY", false],
      ["anthropic", "ANTHROPIC_API_KEY", false],
      ["google-vertex", "GOOGLE_APPLICATION_CREDENTIALS", false],
      ["google", "GEMINI_API_KEY", false],
      ["mistral", "MISTRAL_API_KEY", false],
      ["groq", "GROQ_API_KEY", true],
      ["ollama", "OLLAMA_BASE_URL", true],
    ]);
  });

  test("every catalog default model exists in pi-ai's registry", async () => {
    const models = service();
    for (const p of PROVIDERS)
      expect((await models.resolve(`${p.id}/${p.defaultModel}`)).id).toBe(p.defaultModel);
  });
});

describe("ids", () => {
  test("provider/model, where the model part may contain slashes", () => {
    expect(parseModelId("openai/gpt-5-mini")).toEqual({ provider: "openai", model: "gpt-5-mini" });
    expect(parseModelId("groq/openai/gpt-oss-20b")).toEqual({
      provider: "groq",
      model: "openai/gpt-oss-20b",
    });
    for (const bad of ["gpt-5", "/gpt", "openai/", "Open AI/x", "openai/has space"])
      expect(parseModelId(bad)).toBeUndefined();
  });

  test("resolve explains what is wrong", async () => {
    const models = service();
    await expect(models.resolve("gpt-5")).rejects.toThrow(
      new UnknownModelError("Invalid model id 'gpt-5': expected provider/model, e.g. openai/gpt-5-mini"),
    );
    await expect(models.resolve("nope/x")).rejects.toThrow("Unknown provider 'nope'");
    await expect(models.resolve("openai/gpt-99")).rejects.toThrow(
      "Unknown model 'openai/gpt-99'; OpenAI offers",
    );
    expect(await models.resolve("ollama/qwen3:8b")).toMatchObject({
      api: "openai-completions",
      baseUrl: "http://127.0.0.1:11434/v1",
    });
  });
});

describe("default model", () => {
  test("settings, then the first configured provider, then offline", async () => {
    expect(await service().defaultModel()).toEqual({ id: "offline/offline", source: "offline" });
    expect(service().fallbackModel()).toEqual({ id: "offline/offline", source: "offline" });
    const configured = service({ MISTRAL_API_KEY: "m-key", GEMINI_API_KEY: "g-key" });
    expect(await configured.defaultModel()).toEqual({ id: "google/gemini-2.5-flash", source: "provider" });
    expect(await configured.defaultModel("anthropic/claude-sonnet-4-5")).toEqual({
      id: "anthropic/claude-sonnet-4-5",
      source: "settings",
    });
    expect(await configured.defaultModel("anthropic/claude-0")).toMatchObject({
      id: "google/gemini-2.5-flash",
      source: "provider",
      diagnostic: expect.stringContaining("Unknown model 'anthropic/claude-0'"),
    });
  });
});

describe("the offline model", () => {
  test("streams an honest, deterministic reply in chunks", async () => {
    const models = service();
    const model = await models.resolve((await models.defaultModel()).id);
    const events = await collect(models.stream(model, user("What is the capital of France?")));
    const deltas = events.filter((e) => e.type === "text_delta");
    expect(deltas.length).toBeGreaterThan(10);
    const done = events.at(-1);
    if (done?.type !== "done") throw new Error("expected done last");
    const text = done.message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(deltas.map((d) => (d.type === "text_delta" ? d.delta : "")).join("")).toBe(text);
    expect(text).toStartWith("No model is configured");
    for (const p of PROVIDERS) expect(text).toContain(p.envVarName);
    expect(text).toContain('Your message was: "What is the capital of France?"');
    expect(text).toBe(offlineReply(user("What is the capital of France?")));
    expect(done.message.usage.output).toBeGreaterThan(0);
  });

  test("stops when aborted", async () => {
    const models = service();
    const abort = new AbortController();
    const events: AssistantMessageEvent[] = [];
    for await (const event of models.stream(await models.resolve("offline/offline"), user("hi"), {
      signal: abort.signal,
    })) {
      events.push(event);
      if (event.type === "text_delta") abort.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: "error", reason: "aborted" });
    const full = chunkText(offlineReply(user("hi"))).length;
    expect(events.filter((e) => e.type === "text_delta").length).toBeLessThan(full / 2);
  });
});

describe("scripted models (pi-ai faux)", () => {
  test("stream what the test scripts: thinking, text and tool calls", async () => {
    const models = service();
    const scripted = scriptedModel(models, [
      fauxAssistantMessage([fauxThinking("Let me check."), fauxToolCall("read", { path: "a.txt" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage([fauxText("All done.")]),
    ]);
    try {
      const model = await models.resolve(scripted.id);
      const first = await models.complete(model, user("read a.txt"));
      expect(first.stopReason).toBe("toolUse");
      expect(first.content.map((c) => c.type)).toEqual(["thinking", "toolCall"]);
      const events = await collect(models.stream(model, user("and then?")));
      expect(events.map((e) => e.type)).toContain("text_delta");
      expect(events.at(-1)).toMatchObject({ type: "done" });
      expect(scripted.registration.state.callCount).toBe(2);
    } finally {
      scripted.dispose();
    }
    await expect(models.resolve(scripted.id)).rejects.toThrow(UnknownModelError);
  });
});
