/**
 * The one place errors become responses. Every error, thrown anywhere, leaves as the envelope of the
 * path's family with a request id in `x-request-id` (the caller's own, when it sent a usable one), and
 * the same id is in the log line. Unexpected errors are logged with their stack and answered 500 with a
 * generic message: no stack or internal detail reaches a client. Bad input is never a 500: parse and
 * validation failures are 4xx here. Successful responses carry no id: assigning one to every request
 * cost a measurable share of throughput (bench/http.ts) for no reader.
 */
import { Elysia, ValidationError } from "elysia";
import type { Logger } from "../log.ts";
import {
  AppError,
  codeEnvelope,
  type ErrorEnvelope,
  type ErrorInfo,
  errorInfo,
  errorResponse,
  summarize,
} from "./errors.ts";
import { type Issue, issuesFrom } from "./validation.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's request id when it is usable, else a fresh one. */
export function requestIdOf(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/**
 * `envelopeOf` names the envelope of METHOD path: the route's declared one, else that of the family that
 * owns the path (undefined outside every family).
 */
export function errorHandling(
  log: Logger,
  envelopeOf: (method: string, path: string) => ErrorEnvelope | undefined,
) {
  return new Elysia({ name: "atrium/errors" }).onError({ as: "global" }, ({ code, error, request, path }) => {
    const requestId = requestIdOf(request);
    const info = toErrorInfo(code, error, request, path);
    if (info.kind === "internal") {
      log.error("request failed", { requestId, method: request.method, path, error });
    }
    return errorResponse(info, envelopeOf(request.method, path) ?? codeEnvelope, requestId);
  });
}

/**
 * Elysia converts numeric query parameters itself and, when the converted number breaks the schema
 * (`?limit=500` over a maximum), reports the value without its name. The name is recovered from the URL.
 */
function coercionIssues(error: ValidationError, request: Request): Issue[] {
  const params = new URL(request.url).searchParams;
  let key: string | undefined;
  for (const [name, raw] of params) {
    if (raw === String(error.value) || (raw.trim() !== "" && Number(raw) === error.value)) key = name;
  }
  return issuesFrom("query", error.all).map((issue) => ({ ...issue, loc: key ? ["query", key] : issue.loc }));
}

function toErrorInfo(code: string | number, error: unknown, request: Request, path: string): ErrorInfo {
  if (error instanceof AppError) return errorInfo(error);
  if (error instanceof ValidationError) {
    // A response that fails its own schema is our bug, not the caller's.
    if (error.type === "response") return { kind: "internal", message: "Internal server error" };
    const issues =
      error.type === "property" ? coercionIssues(error, request) : issuesFrom(error.type, error.all);
    return { kind: "invalid", message: summarize(issues), issues };
  }
  switch (code) {
    case "PARSE": {
      const issues: Issue[] = [
        {
          loc: ["body"],
          msg: "The request body could not be parsed (malformed JSON?)",
          type: "json_invalid",
        },
      ];
      return { kind: "invalid", message: summarize(issues), issues };
    }
    case "NOT_FOUND":
      return { kind: "not_found", message: `No route for ${request.method} ${path}` };
    case "INVALID_COOKIE_SIGNATURE":
      return { kind: "unauthorized", message: "Invalid cookie signature" };
    case "INVALID_FILE_TYPE":
      return { kind: "invalid", message: "Unsupported file type" };
    default:
      return { kind: "internal", message: "Internal server error" };
  }
}
