/**
 * Chat catalog routes: models, provider discovery, providers and stored keys, slash commands, pi
 * resources, settings. Thin: validated input, one service call, the answer.
 */
import { Elysia } from "elysia";
import {
  Commands,
  DiscoverBody,
  Discovered,
  DiscoverQuery,
  Models,
  ProviderRemove,
  Providers,
  ProviderTestBody,
  ProviderTestParams,
  ProviderTestResult,
  ProviderUpdate,
  ProviderUpdated,
  Resources,
  Settings,
  SettingsUpdateBody,
  SettingsUpdated,
} from "../../../schemas/chat.ts";
import { ChatError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { invalidValue } from "../../http/errors.ts";
import type { ChatCatalogService } from "../services/catalogs.ts";
import type { ChatSettingsService } from "../services/settings.ts";

const tags = ["chat"];

/** The provider of an update: `provider` (Atrium's name) or `providerId` (the reference client's). */
function providerOf(body: { provider?: string; providerId?: string }): string {
  const provider = body.provider ?? body.providerId;
  if (!provider) throw invalidValue(["body", "provider"], "Field required (provider or providerId)");
  return provider;
}

export function catalogRoutes(
  ctx: AppContext,
  { catalogs, settings }: { catalogs: ChatCatalogService; settings: ChatSettingsService },
) {
  return new Elysia({ name: "atrium/chat/catalogs" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get("/api/chat/models", ({ owner }) => catalogs.modelsFor(owner), {
      response: { 200: Models },
      detail: { summary: "Models, the selected default and diagnostics", tags },
    })
    .get("/api/chat/models/discover", ({ query, owner }) => catalogs.discover(owner, query.provider), {
      query: DiscoverQuery,
      response: { 200: Discovered, 400: ChatError },
      detail: {
        summary: "What a configured provider offers (Ollama's local tags, provider model lists)",
        tags,
      },
    })
    .post("/api/chat/models/discover", ({ body, owner }) => catalogs.discover(owner, body.providerId), {
      body: DiscoverBody,
      response: { 200: Discovered, 400: ChatError },
      detail: { summary: "The same as GET /api/chat/models/discover, the provider in a JSON body", tags },
    })
    .get("/api/chat/providers", ({ owner }) => catalogs.providers(owner), {
      response: { 200: Providers },
      detail: { summary: "The eight providers and whether each is configured", tags },
    })
    .post("/api/chat/providers", ({ body, owner }) => catalogs.setProvider(owner, providerOf(body), body), {
      body: ProviderUpdate,
      response: { 200: ProviderUpdated, 400: ChatError },
      detail: {
        summary:
          "Store or clear your key for a provider (never echoed; the env variable wins). The provider as provider or providerId",
        tags,
      },
    })
    .delete("/api/chat/providers", ({ body, owner }) => catalogs.removeProvider(owner, body.providerId), {
      body: ProviderRemove,
      response: { 200: ProviderUpdated, 400: ChatError },
      detail: { summary: "Clear your stored key for a provider (the env variable, if set, stays)", tags },
    })
    .post(
      "/api/chat/providers/:id/test",
      ({ params, body, owner }) => catalogs.testProvider(owner, params.id, body),
      {
        params: ProviderTestParams,
        body: ProviderTestBody,
        response: { 200: ProviderTestResult, 400: ChatError },
        detail: {
          summary:
            "Test a provider's connection: one model-list request with the typed or stored key (5 s at most); the answer says in words what happened, never the key",
          tags,
        },
      },
    )
    .get("/api/chat/commands", ({ owner }) => catalogs.commands(owner), {
      response: { 200: Commands },
      detail: { summary: "Slash commands: builtin, skill, prompt and extension", tags },
    })
    .get("/api/chat/resources", ({ owner }) => catalogs.resources(owner), {
      response: { 200: Resources },
      detail: { summary: "pi resources: packages, skills, prompts, extensions, themes, AGENTS files", tags },
    })
    .get("/api/chat/settings", ({ owner }) => settings.settings(owner), {
      response: { 200: Settings },
      detail: {
        summary:
          "Chat settings: effective, your own (project), the file and diagnostics, as an update answers",
        tags,
      },
    })
    .patch("/api/chat/settings", ({ body, owner }) => settings.update(owner, body.settings), {
      body: SettingsUpdateBody,
      response: { 200: SettingsUpdated, 400: ChatError },
      detail: { summary: "The same as POST /api/chat/settings (the reference client's method)", tags },
    })
    .post("/api/chat/settings", ({ body, owner }) => settings.update(owner, body.settings), {
      body: SettingsUpdateBody,
      response: { 200: SettingsUpdated, 400: ChatError },
      detail: {
        summary:
          "Update settings (partial); answers the effective settings and the impact. extensions and packages: local mode only, paths inside your pi agent dir; a refused change is left out and named in diagnostics",
        tags,
      },
    });
}
