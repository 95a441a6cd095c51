/**
 * Chat's 400 for input only a service can judge (a session file outside the caller's folder, an answer
 * that does not fit the pending question, a settings entry naming code elsewhere): the same
 * `Invalid request: <where>: <what>` message and `errors` list as a schema failure gives.
 */
import { AppError } from "../../http/errors.ts";
import type { Issue } from "../../http/validation.ts";

export function invalidRequest(first: Issue, ...more: Issue[]): AppError {
  return new AppError("invalid", `Invalid request: ${first.loc.join(".")}: ${first.msg}`, {
    issues: [first, ...more],
  });
}

/** The usual case: one issue of type `value_error` at `loc`. */
export function invalidValue(loc: (string | number)[], msg: string): AppError {
  return invalidRequest({ loc, msg, type: "value_error" });
}
