/**
 * HTTP routes of chat sessions (/v1/chat/sessions): the session list and a session's history. The chat
 * itself is the WebSocket (chat-socket.ts); its protocol is documented on the list route, since Swagger
 * has no WebSocket operations.
 */
import { Elysia } from "elysia";
import * as S from "../../../schemas/agents.ts";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { invalidRequest } from "../../http/errors.ts";
import { pageOf } from "../../http/paging.ts";
import type { AgentSessionService } from "../services/sessions.ts";

/** An ISO 8601 cursor, normalised to the stored form; anything else is a 422 naming the parameter. */
function cursor(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(ms))
    throw invalidRequest([
      { loc: ["query", name], msg: "Input should be a valid ISO 8601 datetime", type: "datetime_parsing" },
    ]);
  return new Date(ms).toISOString();
}

export function agentSessionRoutes(
  { identity }: Pick<AppContext, "identity">,
  { sessions }: { sessions: AgentSessionService },
) {
  return new Elysia({ name: "atrium/agents/sessions", detail: { tags: ["agents"] } })
    .use(identity)
    .guard({ owner: true })
    .get(
      "/v1/chat/sessions",
      ({ query, owner }) =>
        sessions.list(owner, {
          ...pageOf(query),
          status: query.status,
          target_id: query.target_id,
          target_type: query.target_type,
        }),
      {
        query: S.ChatSessionListQuery,
        response: { 200: S.ChatSessionList, 422: HTTPValidationError },
        detail: {
          summary: "List chat sessions",
          description:
            "Most recently active first. Status: `active`; `inactive` when the target has no active agent or 30 minutes passed since the last message (a new message reactivates it when the target has an active agent, else it is refused with an error frame `target_inactive`); `ended` after end_session (cannot be resumed). Chat itself is the WebSocket `/v1/chat`: connect with query `target_id` + `target_type` (agent|fleet) or `session_id` (resume), optional `max_turns`, `temperature`, `auth_token`; the server answers `{type: connected, status, session_id, target: {id, type, name}}`. Send `{type: message, content, context?}` (context: `stream: false` for one `response` frame, `thread_id`, `parent_id`, `capabilities` for dynamic routing); replies are `stream` frames `{message_id, chunk, is_complete, metadata: {agent_id, agent_name, phase, step}}`, the last one `is_complete: true` with `metadata.agents` (who spoke, in order). `{type: end_session}` → `session_ended`. Every client frame is checked against its schema (`content` 1..100,000 characters, not only whitespace; `context.thread_id`/`parent_id` up to 100 characters; `context.capabilities` from the capability enum): a frame that fails gets `{type: error, code: invalid_frame, message, loc}` and the socket stays open. Errors are `{type: error, code, message}`; refused connections close with 4400 (bad parameters), 4401, 4404 (unknown target or session), 4409 (target mismatch), 4410 (ended); frames over 256 KiB close with 1009.",
        },
      },
    )
    .get(
      "/v1/chat/sessions/:session_id/history",
      ({ params, query, owner }) =>
        sessions.history(owner, params.session_id, {
          limit: pageOf(query).limit,
          before: cursor(query.before, "before"),
          after: cursor(query.after, "after"),
          thread_id: query.thread_id,
        }),
      {
        query: S.HistoryQuery,
        response: { 200: S.History, 404: DetailError, 422: HTTPValidationError },
        detail: {
          summary: "Chat history",
          description:
            "Messages oldest first. Timestamps are unique within a session, so they are exact cursors. Without cursors, or with `before`: the newest `limit` messages (before it), `has_more` = older ones exist. With only `after`: the oldest `limit` after it, `has_more` = newer ones exist. `thread_id` keeps one thread (a top-level message starts a thread named after its id; replies carry `parent_id` = the user message).",
        },
      },
    );
}
