/**
 * The OpenAI-compatible routes (docs/openai.md): `GET /v1/models`, `GET /v1/models/{id}`,
 * `POST /v1/chat/completions`, and `POST /v1/embeddings` when the policy names an embeddings endpoint.
 * Thin: the body is read here (capped, parsed, 400 in OpenAI's envelope for what is not JSON) and handed
 * to the service with the caller. Errors leave in OpenAI's envelope because app.ts declares these paths.
 */
import { Elysia } from "elysia";
import { ChatCompletionRequest, EmbeddingsRequest, ModelList, ModelObject } from "../../schemas/openai.ts";
import type { AppContext } from "../context.ts";
import { readJsonBody } from "./request.ts";
import type { OpenAiService } from "./service.ts";

const TAG = "openai";
const errors = {
  400: { description: "Bad input: `{error: {message, type, param, code}}`, `param` naming the field" },
  401: { description: "No credential (protected mode)" },
  403: { description: "A credential other than an access token, or a token without the kind's scope" },
  404: { description: "`model_not_found`: unknown, or not the caller's" },
};

export function openaiRoutes(
  { identity }: Pick<AppContext, "identity">,
  { openai, embeddings }: { openai: OpenAiService; embeddings: boolean },
) {
  const routes = new Elysia({ name: "atrium/openai", detail: { tags: [TAG] } })
    .use(identity)
    .get("/v1/models", ({ identity, request }) => openai.list({ identity, request }), {
      detail: {
        summary: "The models the caller can use: provider models, rlm, their agents, fleets and indexes",
        description:
          "`owned_by` tells the kind: atrium-provider, atrium-rlm, atrium-agent, atrium-fleet, atrium-search.",
        responses: {
          200: {
            description: "OpenAI's model list",
            content: { "application/json": { schema: ModelList as never } },
          },
          ...errors,
        },
      },
    })
    .get(
      "/v1/models/*",
      ({ identity, request, params }) => openai.get({ identity, request }, decodeURIComponent(params["*"])),
      {
        detail: {
          summary: "One model by id (ids hold slashes: `/v1/models/agent/helper`)",
          responses: {
            200: {
              description: "OpenAI's model object",
              content: { "application/json": { schema: ModelObject as never } },
            },
            ...errors,
          },
        },
      },
    )
    .post(
      "/v1/chat/completions",
      async ({ identity, request }) => {
        openai.admit({ identity, request });
        return openai.chat({ identity, request }, await readJsonBody(request));
      },
      {
        parse: "none",
        detail: {
          summary:
            "A chat completion from any model kind (OpenAI's request and response; `stream: true` for SSE)",
          description:
            "Model ids: `provider/model` (`offline/offline` without a provider), `rlm`, `rlm/<provider/model>` (a turn on that root model), `agent/<name-or-id>`, `fleet/<name-or-id>`, `search/<index>`, `search/<index>/global`. `n` > 1, `logprobs` and audio are refused (400 naming the parameter). A turn (`rlm`) takes an `Idempotency-Key` header: the same request again replays it.",
          requestBody: {
            required: true,
            content: { "application/json": { schema: ChatCompletionRequest as never } },
          },
          responses: {
            200: {
              description:
                "`chat.completion`, or an SSE stream of `chat.completion.chunk` ending `data: [DONE]`",
              content: {
                "application/json": { schema: { type: "object" as const } },
                "text/event-stream": { schema: { type: "string" as const } },
              },
            },
            ...errors,
          },
        },
      },
    );
  if (!embeddings) return routes;
  return routes.post(
    "/v1/embeddings",
    async ({ identity, request }) => {
      openai.admit({ identity, request });
      return openai.embed({ identity, request }, await readJsonBody(request));
    },
    {
      parse: "none",
      detail: {
        summary: "Embeddings from the server's configured embeddings endpoint (the search family's)",
        requestBody: {
          required: true,
          content: { "application/json": { schema: EmbeddingsRequest as never } },
        },
        responses: { 200: { description: "OpenAI's embedding list" }, ...errors },
      },
    },
  );
}
