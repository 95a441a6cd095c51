/**
 * Request bodies: which types a route takes, and limits on the JSON it parses. Both run before
 * validation and before any handler.
 *
 * - Types, checked on the request before routing: a body sent with POST, PUT, PATCH or DELETE must be
 *   `application/json`; routes declared `type: "multipart/form-data"` (uploads) also take multipart, and
 *   a route declared `routePolicy: { bodies: "any" }` (route-policy.ts) takes whatever comes.
 *   Anything else is 415 in the family's envelope. Elysia would otherwise parse
 *   `application/x-www-form-urlencoded`, `multipart/form-data` and `text/plain` on every route: the
 *   types a cross-site page can send without a CORS preflight. Refused here, those parsers never run.
 * - JSON limits, checked on the parsed body (json-body.ts): an object at the top (every body of these
 *   APIs is one; Elysia would turn `1`, `"text"` or `[]` into `{}` while filling defaults), nesting
 *   depth, numbers a double holds exactly, no prototype keys.
 */
import { Elysia } from "elysia";
import { AppError, invalidRequest } from "./errors.ts";
import { inspectJson } from "./json-body.ts";
import { pathOf } from "./path.ts";
import type { RoutePolicies } from "./route-policy.ts";

const JSON_TYPE = "application/json";
const MULTIPART = "multipart/form-data";
const WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function requestBodies(policies: RoutePolicies) {
  return new Elysia({ name: "atrium/bodies" })
    .onRequest(({ request }) => {
      if (!WITH_BODY.has(request.method)) return;
      const path = pathOf(request);
      // A route that forwards the body as it came (routePolicy `bodies: "any"`) takes every type.
      const kinds = policies.bodies(request.method, path);
      if (kinds === "any") return;
      const header = request.headers.get("content-type");
      const type = header === null ? "" : (header.split(";")[0] as string).trim().toLowerCase();
      if (type === JSON_TYPE) return;
      // No type and no body: nothing to parse (a POST that only names an action).
      if (type === "" && request.body === null) return;
      const upload = kinds === "json+multipart";
      if (type === MULTIPART && upload) return;
      const got = type === "" ? "no Content-Type" : `'${type.slice(0, 100)}'`;
      throw new AppError(
        "invalid",
        `This route takes a body of type ${upload ? MULTIPART : JSON_TYPE}; got ${got}`,
        { status: 415, code: "unsupported_media_type" },
      );
    })
    .onTransform({ as: "global" }, ({ body }) => {
      if (body === undefined) return;
      const issue = inspectJson(body);
      if (issue) {
        throw invalidRequest([issue]);
      }
    });
}
