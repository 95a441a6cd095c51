/**
 * Chat session routes: new, resume, hydrate, list, delete, abort, account erase and answering a
 * pending question. Thin: validated input, one service call, the answer (404 bodies as the contract gives).
 */
import { Elysia } from "elysia";
import {
  Aborted,
  AccountErased,
  Hydrated,
  NewSession,
  QuestionAnswer,
  QuestionAnswered,
  QuestionMissing,
  SessionDeleted,
  SessionDeleteMissing,
  SessionList,
  SessionRef,
  SessionsQuery,
} from "../../../schemas/chat.ts";
import { ChatError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { ChatSessionService } from "../services/sessions.ts";

const tags = ["chat"];

export function chatSessionRoutes(ctx: AppContext, { sessions }: { sessions: ChatSessionService }) {
  return new Elysia({ name: "atrium/chat/sessions" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/api/chat/new", ({ owner }) => sessions.create(owner), {
      response: { 200: NewSession },
      detail: { summary: "Create a chat session", tags },
    })
    .post("/api/chat/resume", ({ body, owner }) => sessions.hydrate(owner, body), {
      body: SessionRef,
      response: { 200: Hydrated, 400: ChatError },
      detail: { summary: "Resume a chat session (a lost one comes back fresh with sessionReset)", tags },
    })
    .get("/api/chat/session", ({ query, owner }) => sessions.show(owner, query), {
      query: SessionRef,
      response: { 200: Hydrated, 400: ChatError, 404: ChatError },
      detail: {
        summary:
          "Hydrate one of your chat sessions (the latest without a reference): session, messages; 404 for none, never a new one",
        tags,
      },
    })
    .get("/api/chat/sessions", ({ query, owner }) => sessions.list(owner, pageOf(query)), {
      query: SessionsQuery,
      response: { 200: SessionList },
      detail: { summary: "List chat sessions, newest first", tags },
    })
    .delete(
      "/api/chat/session",
      async ({ query, owner, status }) => {
        const result = await sessions.remove(owner, query);
        return result.ok ? result : status(404, result);
      },
      {
        query: SessionRef,
        response: { 200: SessionDeleted, 404: SessionDeleteMissing, 501: ChatError, 503: ChatError },
        detail: { summary: "Delete a session with its runs, tool output, file mutations and file", tags },
      },
    )
    .post("/api/chat/abort", ({ body, owner }) => sessions.abort(owner, body), {
      body: SessionRef,
      response: { 200: Aborted },
      detail: { summary: "Abort the session's running turn", tags },
    })
    .delete("/api/chat/account", ({ owner }) => sessions.eraseAccount(owner), {
      response: { 200: AccountErased },
      detail: { summary: "Erase every mirrored session and stored provider key of the caller", tags },
    })
    .post(
      "/api/chat/question",
      ({ body, owner, status }) => {
        const result = sessions.answer(owner, body);
        return result.ok ? result : status(404, result);
      },
      {
        body: QuestionAnswer,
        response: { 200: QuestionAnswered, 400: ChatError, 404: QuestionMissing },
        detail: { summary: "Answer (or skip) a question the model asked", tags },
      },
    );
}
