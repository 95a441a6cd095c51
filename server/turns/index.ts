/** The turns family (specs/turn-service-api.md): the recursive-language-model turn service. Routes arrive with its issue. */
import { Elysia } from "elysia";
import type { Family } from "../family.ts";

export const turnsFamily: Family = {
  name: "turns",
  tag: {
    name: "turns",
    description:
      "Recursive-language-model turns over SSE: the model writes Python that runs in a sandbox; sessions, attachments, artifacts, files, skills, settings and health (specs/turn-service-api.md).",
  },
  migrations: [],
  routes: () => new Elysia({ name: "atrium/turns" }),
};
