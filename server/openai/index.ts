/**
 * The OpenAI-compatible endpoint as the app mounts it (server/app.ts): its paths (which take OpenAI's
 * error envelope and no path-level token scope: each model kind checks its own), its docs tag, and its
 * routes. Like the MCP server it reaches agents, fleets, turns and search through `handle` (the
 * composed app's own), never by importing them; provider models go to the shared model layer.
 */
import type { AppContext } from "../context.ts";
import type { FamilyPaths } from "../http/families.ts";
import type { Handle } from "../mcp/http.ts";
import { policyEmbeddings } from "../models/embeddings.ts";
import { openaiRoutes } from "./routes.ts";
import { type OpenAiOptions, OpenAiService } from "./service.ts";

export const OPENAI_TAG = {
  name: "openai",
  description:
    "OpenAI-compatible endpoint (base URL `/v1`): every provider model, the offline model, Python turns (`rlm`), agents, fleets and search indexes as models, for the `openai` SDK, the AI SDK and editors (docs/openai.md).",
};

/** The paths that are OpenAI's (within the agents family's `/v1`): declared before the families. */
export const OPENAI_PATHS: FamilyPaths = {
  prefixes: ["/v1/models"],
  exact: ["/v1/chat/completions", "/v1/embeddings"],
};

/** The default cap on one reply's tokens when the policy names none. */
const DEFAULT_MAX_COMPLETION_TOKENS = 32_768;

export function atriumOpenAi(ctx: AppContext, handle: Handle, extra: Pick<OpenAiOptions, "storedKeys"> = {}) {
  const embeddings = policyEmbeddings(ctx.config);
  const openai = new OpenAiService({
    models: ctx.models,
    handle,
    tokensOnly: ctx.config.mode.kind === "protected",
    maxCompletionTokens:
      ctx.config.policy.settings.openai?.max_completion_tokens ?? DEFAULT_MAX_COMPLETION_TOKENS,
    embeddings,
    shutdown: ctx.shutdown,
    ...extra,
  });
  return { routes: openaiRoutes(ctx, { openai, embeddings: embeddings !== undefined }), service: openai };
}
