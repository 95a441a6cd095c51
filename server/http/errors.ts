/**
 * Errors and the three error envelopes (DESIGN.md, ruling 8).
 *
 * Services throw AppError with a kind ("not_found", "conflict", ...); the family of the path decides the
 * status and body: chat `{message, errors?}` (400 for validation), turns `{error: {code, message}}`
 * (422 `invalid_request`), search and agents FastAPI-style (`{detail: [{loc, msg, type}]}` for validation,
 * `{detail: "..."}` otherwise). Nothing here knows Elysia.
 */
import type { FamilyName } from "./families.ts";
import type { Issue } from "./validation.ts";

export type ErrorKind =
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "rate_limited"
  | "not_ready"
  | "unavailable"
  | "not_implemented"
  | "internal";

const STATUS: Record<ErrorKind, number> = {
  invalid: 422,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  not_ready: 503,
  unavailable: 503,
  not_implemented: 501,
  internal: 500,
};

const CODE: Record<ErrorKind, string> = {
  invalid: "invalid_request",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  not_found: "not_found",
  conflict: "conflict",
  too_large: "payload_too_large",
  rate_limited: "rate_limited",
  not_ready: "service_not_ready",
  unavailable: "service_unavailable",
  not_implemented: "not_implemented",
  internal: "internal_error",
};

export interface AppErrorOptions {
  /** Machine-readable code for the turns envelope (default derived from the kind). */
  code?: string;
  /** Overrides the status the kind and family would give. */
  status?: number;
  issues?: Issue[];
  headers?: Record<string, string>;
}

export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(message);
  }

  static notFound(message = "Not Found") {
    return new AppError("not_found", message);
  }
}

/** What a response needs, whatever the envelope. */
export interface ErrorInfo {
  kind: ErrorKind;
  message: string;
  code?: string;
  status?: number;
  issues?: Issue[];
  headers?: Record<string, string>;
}

export function errorInfo(error: AppError): ErrorInfo {
  return { kind: error.kind, message: error.message, ...error.options };
}

/** The status for a kind in a family: validation is 400 in chat, 422 elsewhere. */
export function statusFor(info: ErrorInfo, family: FamilyName | undefined): number {
  if (info.status) return info.status;
  if (info.kind === "invalid" && family === "chat") return 400;
  return STATUS[info.kind];
}

/** The JSON body for an error in a family's envelope. */
export function errorBody(info: ErrorInfo, family: FamilyName | undefined): unknown {
  switch (family) {
    case "chat":
      return info.issues?.length ? { message: info.message, errors: info.issues } : { message: info.message };
    case "search":
    case "agents":
      return info.kind === "invalid" && info.issues?.length
        ? { detail: info.issues }
        : { detail: info.message };
    default:
      return { error: { code: info.code ?? CODE[info.kind], message: info.message } };
  }
}

export function errorResponse(info: ErrorInfo, family: FamilyName | undefined, requestId?: string): Response {
  const headers: Record<string, string> = { "content-type": "application/json", ...info.headers };
  if (requestId) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify(errorBody(info, family)), { status: statusFor(info, family), headers });
}
