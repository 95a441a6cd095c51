/** Chat run routes: a session's recorded runs and one run's provenance (re-running one: turns.ts). */
import { Elysia } from "elysia";
import { Provenance, ProvenanceQuery, Runs, RunsQuery } from "../../../schemas/chat.ts";
import { ChatError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { ChatProvenanceService } from "../services/provenance.ts";

const tags = ["chat"];

export function chatRunRoutes(ctx: AppContext, { provenance }: { provenance: ChatProvenanceService }) {
  return new Elysia({ name: "atrium/chat/runs" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get("/api/chat/runs", ({ query, owner }) => provenance.list(owner, query.sessionId, pageOf(query)), {
      query: RunsQuery,
      response: { 200: Runs, 400: ChatError },
      detail: { summary: "List the recorded runs of a session, newest first", tags },
    })
    .get("/api/chat/provenance", ({ query, owner }) => provenance.provenance(owner, query.runId), {
      query: ProvenanceQuery,
      response: { 200: Provenance, 400: ChatError, 404: ChatError },
      detail: { summary: "Provenance of a run: model, settings, tool calls, files touched, timings", tags },
    });
}
