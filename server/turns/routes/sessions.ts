/** Sessions and their committed turn history: thin routes over TurnSessionService. */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import {
  Session,
  SessionCreate,
  SessionList,
  SessionListQuery,
  SessionParams,
  SessionPatch,
  TurnHistory,
} from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { TurnSessionService } from "../services/sessions.ts";

const tags = ["turns"];

export function turnSessionRoutes(ctx: AppContext, { sessions }: { sessions: TurnSessionService }) {
  return new Elysia({ name: "atrium/turns/sessions" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/api/sessions", ({ owner, body }) => sessions.create(owner, body.title), {
      body: SessionCreate,
      response: { 200: Session, 422: TurnsError },
      detail: { summary: "Create a Session", tags },
    })
    .get("/api/sessions", ({ owner, query }) => sessions.list(owner, pageOf(query), query.archived), {
      query: SessionListQuery,
      response: { 200: SessionList, 422: TurnsError },
      detail: { summary: "List owned Sessions, newest first", tags },
    })
    .get("/api/sessions/:session_id", ({ owner, params }) => sessions.get(owner, params.session_id), {
      params: SessionParams,
      response: { 200: Session, 404: TurnsError },
      detail: { summary: "Read a Session", tags },
    })
    .patch(
      "/api/sessions/:session_id",
      ({ owner, params, body }) => sessions.update(owner, params.session_id, body),
      {
        params: SessionParams,
        body: SessionPatch,
        response: { 200: Session, 404: TurnsError, 422: TurnsError },
        detail: { summary: "Rename, archive or unarchive a Session", tags },
      },
    )
    .get(
      "/api/sessions/:session_id/turns",
      ({ owner, params, query }) => sessions.history(owner, params.session_id, pageOf(query)),
      {
        params: SessionParams,
        query: SessionListQuery,
        response: { 200: TurnHistory, 404: TurnsError },
        detail: { summary: "Ordered committed Turn history", tags },
      },
    );
}
