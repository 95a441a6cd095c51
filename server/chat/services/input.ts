/**
 * Everything about a chat request that can be checked before a stream opens: message vs planAction,
 * the model (`provider/model` or `{provider, id, thinkingLevel}`), and the session file's confinement to
 * the caller's sessions folder. A failure is a 400 and nothing has been created.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { AppError } from "../../http/errors.ts";
import { parseModelId } from "../../models/ids.ts";
import { confineSessionFile } from "../paths.ts";
import type { SessionTarget } from "../runtime/host.ts";
import type { ChatMode, PlanAction } from "../runtime/plan.ts";

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

export interface ChatInput {
  sessionFile?: string;
  sessionId?: string;
  message?: string;
  model?: string | { provider: string; id: string; thinkingLevel?: ThinkingLevel };
  mode?: ChatMode;
  planAction?: PlanAction;
  streamingBehavior?: "steer" | "followUp";
}

export interface PreparedChat {
  target: SessionTarget;
  text: string;
  model?: Model<Api>;
  modelId?: string;
  thinkingLevel?: ThinkingLevel;
  mode?: ChatMode;
  planAction?: PlanAction;
  streamingBehavior?: "steer" | "followUp";
}

function invalid(loc: string[], msg: string): AppError {
  return new AppError("invalid", `Invalid request: ${loc.join(".")}: ${msg}`, {
    issues: [{ loc, msg, type: "value_error" }],
  });
}

export interface SessionQuery {
  sessionFile?: string;
  sessionId?: string;
}

/** Confines a client-named session file; throws 400 when it points outside the sessions folder. */
export function sessionTarget(sessionsDir: string, input: SessionQuery): SessionTarget {
  const target: SessionTarget = {};
  if (input.sessionId) target.sessionId = input.sessionId;
  if (input.sessionFile) {
    const file = confineSessionFile(sessionsDir, input.sessionFile);
    if (!file)
      throw invalid(["body", "sessionFile"], "must name a .jsonl session file inside your sessions folder");
    target.sessionFile = file;
  }
  return target;
}

export function prepareChat(
  input: ChatInput,
  sessionsDir: string,
  resolve: (id: string) => Model<Api>,
): PreparedChat {
  const text = input.message?.trim() ?? "";
  if (!text && !input.planAction)
    throw invalid(["body", "message"], "a non-empty message is required unless planAction is given");
  let modelId: string | undefined;
  let thinkingLevel: ThinkingLevel | undefined;
  if (typeof input.model === "string") {
    if (!parseModelId(input.model) && input.model !== "offline")
      throw invalid(
        ["body", "model"],
        `'${input.model}' is not a provider/model id (e.g. openai/gpt-5-mini)`,
      );
    modelId = input.model;
  } else if (input.model) {
    modelId = `${input.model.provider}/${input.model.id}`;
    if (!parseModelId(modelId)) throw invalid(["body", "model"], `'${modelId}' is not a provider/model id`);
    thinkingLevel = input.model.thinkingLevel;
  }
  let model: Model<Api> | undefined;
  if (modelId) {
    try {
      model = resolve(modelId);
    } catch (error) {
      throw invalid(["body", "model"], (error as Error).message);
    }
  }
  return {
    target: sessionTarget(sessionsDir, input),
    text,
    model,
    modelId,
    thinkingLevel,
    mode: input.mode,
    planAction: input.planAction,
    streamingBehavior: input.streamingBehavior,
  };
}
