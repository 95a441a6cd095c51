/**
 * OpenAI's error envelope, `{error: {message, type, param, code}}`, for the OpenAI-compatible paths only
 * (server/openai/index.ts declares them; server/app.ts picks the envelope by path). Services throw the
 * app's AppError as everywhere; the parameter at fault travels as the first issue's location
 * (`["body", "n"]` → `param: "n"`), the OpenAI code as the error's code.
 */
import {
  AppError,
  type ErrorEnvelope,
  type ErrorInfo,
  type ErrorKind,
  statusOfKind,
} from "../http/errors.ts";
import { ToolError } from "../mcp/http.ts";

/** OpenAI's `type` per kind of error, as its API and SDKs name them. */
const TYPE: Record<ErrorKind, string> = {
  invalid: "invalid_request_error",
  unauthorized: "authentication_error",
  forbidden: "permission_error",
  not_found: "invalid_request_error",
  conflict: "invalid_request_error",
  too_large: "invalid_request_error",
  rate_limited: "rate_limit_error",
  not_ready: "server_error",
  unavailable: "server_error",
  not_implemented: "invalid_request_error",
  internal: "server_error",
};

/** The parameter an error is about: the first issue's location below `body` (`messages.0.role`). */
function paramOf(info: ErrorInfo): string | null {
  const loc = info.issues?.[0]?.loc;
  if (loc?.[0] !== "body" || loc.length < 2) return null;
  return loc
    .slice(1)
    .map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join("");
}

export const openaiEnvelope: ErrorEnvelope = {
  // As the other envelopes, but validation is 400 (OpenAI's status for a bad request).
  status: (info) => info.status ?? (info.kind === "invalid" ? 400 : statusOfKind(info.kind)),
  body: (info) => ({
    error: {
      message: info.message,
      type: TYPE[info.kind],
      param: paramOf(info),
      code: info.code ?? null,
    },
  }),
};

/** A 400 about one body parameter (`param` is its dotted path below the body). */
export function badParam(param: string, message: string, code = "invalid_value"): AppError {
  const loc = ["body", ...param.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
  return new AppError("invalid", message, { code, issues: [{ loc, msg: message, type: code }] });
}

/** OpenAI's 404 for a model the caller cannot use: unknown, or someone else's. */
export function modelNotFound(model: string): AppError {
  const shown = model.length > 200 ? `${model.slice(0, 200)}…` : model;
  return new AppError(
    "not_found",
    `The model '${shown}' does not exist or you do not have access to it (GET /v1/models lists yours)`,
    {
      code: "model_not_found",
      issues: [{ loc: ["body", "model"], msg: "not found", type: "model_not_found" }],
    },
  );
}

/** A family's refusal in OpenAI's terms (its status, its message). */
export function fromFamily(error: unknown): unknown {
  if (!(error instanceof ToolError)) return error;
  const kind =
    error.status === 401
      ? "unauthorized"
      : error.status === 403
        ? "forbidden"
        : error.status === 404
          ? "not_found"
          : error.status === 429
            ? "rate_limited"
            : error.status >= 500
              ? "unavailable"
              : "invalid";
  return new AppError(kind, error.message.replace(/^\d+: /, ""), {
    status: error.status === 422 ? 400 : error.status,
  });
}
