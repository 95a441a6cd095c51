/**
 * What a chat request needs checked before a stream opens, beyond the shapes its schema
 * (schemas/chat.ts) already enforced: a message unless `planAction` is given (blank counts as none),
 * the model id read by `server/models/ids.ts` (the one parser of `provider/model`) and resolved for the
 * owner (their models.json too), and a session file confined to the caller's sessions folder. A failure
 * is a 400 and nothing has been created.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { ChatRequest, SessionRef } from "../../../schemas/chat.ts";
import { invalidValue } from "../../http/errors.ts";
import { parseModelId } from "../../models/ids.ts";
import { confineSessionFile } from "../runtime/chat-folders.ts";
import type { SessionTarget } from "../runtime/host.ts";

export type ChatInput = typeof ChatRequest.static;
export type SessionQuery = typeof SessionRef.static;
type RequestedLevel = NonNullable<Exclude<ChatInput["model"], string | undefined>["thinkingLevel"]>;
/** pi's levels: a request's `max` (the reference client's highest) is pi's highest, `xhigh`. */
export type ThinkingLevel = Exclude<RequestedLevel, "max">;

export interface PreparedChat {
  target: SessionTarget;
  text: string;
  model?: Model<Api>;
  thinkingLevel?: ThinkingLevel;
  mode?: ChatInput["mode"];
  planAction?: ChatInput["planAction"];
  streamingBehavior?: ChatInput["streamingBehavior"];
}

/** Confines a client-named session file; throws 400 when it points outside the sessions folder. */
export function sessionTarget(sessionsDir: string, input: SessionQuery): SessionTarget {
  const target: SessionTarget = {};
  if (input.sessionId) target.sessionId = input.sessionId;
  if (input.sessionFile) {
    const file = confineSessionFile(sessionsDir, input.sessionFile);
    if (!file)
      throw invalidValue(
        ["body", "sessionFile"],
        "must name a .jsonl session file inside your sessions folder",
      );
    target.sessionFile = file;
  }
  return target;
}

export async function prepareChat(
  input: ChatInput,
  sessionsDir: string,
  resolve: (id: string) => Promise<Model<Api>>,
): Promise<PreparedChat> {
  const text = input.message?.trim() ?? "";
  if (!text && !input.planAction)
    throw invalidValue(["body", "message"], "a non-empty message is required unless planAction is given");
  const { id: modelId, thinkingLevel } = requestedModel(input.model);
  let model: Model<Api> | undefined;
  if (modelId) {
    try {
      model = await resolve(modelId);
    } catch (error) {
      throw invalidValue(["body", "model"], (error as Error).message);
    }
  }
  return {
    target: sessionTarget(sessionsDir, input),
    text,
    model,
    thinkingLevel,
    mode: input.mode,
    planAction: input.planAction,
    streamingBehavior: input.streamingBehavior,
  };
}

/** The model id a request names (`provider/model`, `offline`, or the object form) and its thinking level. */
function requestedModel(model: ChatInput["model"]): { id?: string; thinkingLevel?: ThinkingLevel } {
  if (typeof model === "string") {
    if (!parseModelId(model) && model !== "offline")
      throw invalidValue(["body", "model"], `'${model}' is not a provider/model id (e.g. openai/gpt-5-mini)`);
    return { id: model };
  }
  if (!model) return {};
  const id = `${model.provider}/${model.id}`;
  if (!parseModelId(id)) throw invalidValue(["body", "model"], `'${id}' is not a provider/model id`);
  const level = model.thinkingLevel;
  return { id, thinkingLevel: level === "max" ? "xhigh" : level };
}
