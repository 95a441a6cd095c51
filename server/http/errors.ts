/**
 * Errors and the three error envelopes (docs/design.md §8).
 *
 * Services throw AppError with a kind ("not_found", "conflict", ...); the envelope the path's family
 * declares decides the status and body: `messageEnvelope` (chat: `{message, errors?}`, 400 for
 * validation), `codeEnvelope` (turns, and paths outside every family: `{error: {code, message}}`, 422
 * `invalid_request`), `detailEnvelope` (search and agents, FastAPI-style: `{detail: [{loc, msg, type}]}`
 * for validation, `{detail: "..."}` otherwise). Nothing here knows Elysia or the families.
 */
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

/** The message of a validation failure: where its first issue is, what it is, and how many more. */
export function summarize(issues: readonly Issue[]): string {
  const first = issues[0];
  if (!first) return "Invalid request";
  const where = first.loc.join(".");
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return `Invalid request: ${where}: ${first.msg}${more}`;
}

/**
 * Input only code can judge (a session file outside the caller's folder, an unknown agent id, a body
 * that is not an object): the same message and issues a schema failure gives, in the family's envelope.
 */
export function invalidRequest(issues: Issue[]): AppError {
  return new AppError("invalid", summarize(issues), { issues });
}

/** The usual case: one issue of type `value_error` at `loc`. */
export function invalidValue(loc: (string | number)[], msg: string): AppError {
  return invalidRequest([{ loc, msg, type: "value_error" }]);
}

export function errorInfo(error: AppError): ErrorInfo {
  return { kind: error.kind, message: error.message, ...error.options };
}

/** How errors look on the wire in one family: the status of an error and its JSON body. */
export interface ErrorEnvelope {
  status(info: ErrorInfo): number;
  body(info: ErrorInfo): unknown;
}

/** The status an error of this kind has where no family says otherwise. */
export const statusOfKind = (kind: ErrorKind): number => STATUS[kind];

const statusOf = (info: ErrorInfo) => info.status ?? STATUS[info.kind];

/** Chat's `{message, errors?}`; validation is 400 there. */
export const messageEnvelope: ErrorEnvelope = {
  status: (info) => info.status ?? (info.kind === "invalid" ? 400 : STATUS[info.kind]),
  body: (info) =>
    info.issues?.length ? { message: info.message, errors: info.issues } : { message: info.message },
};

/** The chat contract's sandbox routes: `{error: "<text>"}`. */
export const errorTextEnvelope: ErrorEnvelope = {
  status: (info) => info.status ?? (info.kind === "invalid" ? 400 : STATUS[info.kind]),
  body: (info) => ({ error: info.message }),
};

/** Turns' `{error: {code, message}}`: also the envelope of paths outside every family. */
export const codeEnvelope: ErrorEnvelope = {
  status: statusOf,
  body: (info) => ({ error: { code: info.code ?? CODE[info.kind], message: info.message } }),
};

/** FastAPI's (search, agents): `{detail: [{loc, msg, type}]}` for validation, `{detail: "..."}` else. */
export const detailEnvelope: ErrorEnvelope = {
  status: statusOf,
  body: (info) =>
    info.kind === "invalid" && info.issues?.length ? { detail: info.issues } : { detail: info.message },
};

export function errorResponse(info: ErrorInfo, envelope: ErrorEnvelope, requestId?: string): Response {
  const headers: Record<string, string> = { "content-type": "application/json", ...info.headers };
  if (requestId) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify(envelope.body(info)), { status: envelope.status(info), headers });
}
