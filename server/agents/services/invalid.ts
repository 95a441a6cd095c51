/**
 * A validation failure the schemas cannot express (an unknown agent id, a model that does not resolve,
 * a malformed cursor), as the 422 `{detail: [{loc, msg, type}]}` of the family's envelope.
 */
import { AppError } from "../../http/errors.ts";
import type { Issue } from "../../http/validation.ts";

export const invalid = (issues: Issue[]) =>
  new AppError("invalid", `Invalid request: ${issues[0]?.loc.join(".")}: ${issues[0]?.msg}`, { issues });
