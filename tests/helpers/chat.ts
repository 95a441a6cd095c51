/** Chat test helpers: scripted models in an app, a chat request shortcut, and event types in order. */
import type { FauxResponseStep } from "@mariozechner/pi-ai";
import { postJson, type TestApp } from "./app.ts";
import { type ScriptedModel, type ScriptedOptions, scriptedModel } from "./faux.ts";
import type { Event } from "./streams.ts";

/** A scripted model registered in the app's model service. */
export function scripted(
  t: TestApp,
  responses: FauxResponseStep[],
  options: ScriptedOptions = {},
): ScriptedModel {
  return scriptedModel(t.ctx.models, responses, options);
}

export function chat(t: TestApp, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.request("/api/chat", postJson(body, headers));
}

export const types = (events: Event[]) => events.map((e) => e.type);
