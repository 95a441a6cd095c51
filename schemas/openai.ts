/**
 * Wire types of the OpenAI-compatible endpoint (server/openai/, docs/openai.md), for the Swagger
 * document: OpenAI's own shapes, loosely (clients send many fields Atrium accepts and ignores). The
 * request is checked by hand in server/openai/request.ts so each refusal names its parameter. Schemas only.
 */
import { t } from "elysia";
import { Integer } from "./common.ts";

export const ModelObject = t.Object({
  id: t.String({ examples: ["offline/offline"] }),
  object: t.Literal("model"),
  created: Integer(),
  owned_by: t.String({
    description: "the kind: atrium-provider, atrium-rlm, atrium-agent, atrium-fleet, atrium-search",
  }),
});

export const ModelList = t.Object({ object: t.Literal("list"), data: t.Array(ModelObject) });

const Message = t.Object(
  {
    role: t.Union([
      t.Literal("system"),
      t.Literal("developer"),
      t.Literal("user"),
      t.Literal("assistant"),
      t.Literal("tool"),
    ]),
    content: t.Optional(
      t.Union([t.String(), t.Array(t.Object({}, { additionalProperties: true })), t.Null()]),
    ),
    tool_calls: t.Optional(t.Array(t.Object({}, { additionalProperties: true }))),
    tool_call_id: t.Optional(t.String()),
  },
  { additionalProperties: true },
);

export const ChatCompletionRequest = t.Object(
  {
    model: t.String({ examples: ["offline/offline"] }),
    messages: t.Array(Message, { minItems: 1 }),
    stream: t.Optional(t.Boolean()),
    stream_options: t.Optional(t.Object({ include_usage: t.Optional(t.Boolean()) })),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    max_tokens: t.Optional(Integer({ minimum: 1 })),
    max_completion_tokens: t.Optional(Integer({ minimum: 1 })),
    stop: t.Optional(t.Union([t.String(), t.Array(t.String(), { maxItems: 4 })])),
    tools: t.Optional(t.Array(t.Object({}, { additionalProperties: true }))),
    tool_choice: t.Optional(t.Union([t.String(), t.Object({}, { additionalProperties: true })])),
    n: t.Optional(t.Literal(1)),
  },
  {
    additionalProperties: true,
    examples: [{ model: "offline/offline", messages: [{ role: "user", content: "Hello" }] }],
  },
);

export const EmbeddingsRequest = t.Object(
  { model: t.String(), input: t.Union([t.String(), t.Array(t.String())]) },
  { additionalProperties: true },
);
