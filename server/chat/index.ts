/** The chat family (specs/chat-app-api.md): streaming chat on the pi agent runtime. Routes arrive with its issue. */
import { Elysia } from "elysia";
import type { Family } from "../family.ts";

export const chatFamily: Family = {
  name: "chat",
  tag: {
    name: "chat",
    description:
      "Streaming chat backend for the pi agent runtime: NDJSON turns, sessions, models, providers, commands, resources, settings, workspace and sandbox (specs/chat-app-api.md).",
  },
  migrations: [],
  routes: () => new Elysia({ name: "atrium/chat" }),
};
