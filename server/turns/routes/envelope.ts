/**
 * The turns family's error envelope: `{error: {code, message}}` (server/http/errors.ts), with the contract's
 * own codes for two request checks its schemas enforce. The turn POST's headers schema (TurnHeaders)
 * failing is 400 `idempotency_key_required` (missing or empty) or 400 `invalid_idempotency_key` (too
 * long); its body schema failing only inside `skill_selections` is 422 `invalid_skill_selection`, only
 * at `model` 400 `invalid_model`. Every
 * other error keeps the shared mapping (422 `invalid_request` for validation).
 */
import { codeEnvelope, type ErrorEnvelope, type ErrorInfo } from "../../http/errors.ts";
import type { Issue } from "../../http/validation.ts";

const at = (issue: Issue, part: string, field: string) => issue.loc[0] === part && issue.loc[1] === field;

/** The contract's code (and status) for a validation failure these checks own; the rest unchanged. */
export function turnsErrorInfo(info: ErrorInfo): ErrorInfo {
  const issues = info.issues;
  if (info.kind !== "invalid" || !issues?.length) return info;
  if (issues.every((issue) => at(issue, "header", "idempotency-key"))) {
    return issues.some((issue) => issue.type === "string_too_long")
      ? {
          ...info,
          status: 400,
          code: "invalid_idempotency_key",
          message: "The Idempotency-Key header is at most 200 characters",
        }
      : {
          ...info,
          status: 400,
          code: "idempotency_key_required",
          message: "The Idempotency-Key header is required",
        };
  }
  if (issues.every((issue) => at(issue, "body", "model")))
    return {
      ...info,
      status: 400,
      code: "invalid_model",
      message: "model must be a 'provider/model' id of at most 200 characters",
    };
  if (issues.every((issue) => at(issue, "body", "skill_selections")))
    return { ...info, code: "invalid_skill_selection" };
  return info;
}

export const turnsEnvelope: ErrorEnvelope = {
  status: (info) => codeEnvelope.status(turnsErrorInfo(info)),
  body: (info) => codeEnvelope.body(turnsErrorInfo(info)),
};
