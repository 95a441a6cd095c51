/**
 * The model ids of the OpenAI-compatible endpoint and what each one names (docs/openai.md):
 * `provider/model` (the offline model is `offline/offline`), `rlm` and `rlm/<provider/model>`,
 * `agent/<name-or-id>`, `fleet/<name-or-id>`, `search/<index>` and `search/<index>/global`. An id is only
 * parsed here; whether the caller may use what it names is the kind's own lookup, so ids never become
 * paths (an agent is found by listing the caller's agents, an index by listing their indexes).
 */
import type { Scope } from "../auth/scopes.ts";

export type ModelKind =
  | { kind: "provider"; id: string }
  | { kind: "rlm"; root?: string }
  | { kind: "agent"; ref: string }
  | { kind: "fleet"; ref: string }
  | { kind: "search"; index: string; method: "local" | "global" };

/** The longest model id read. */
export const MAX_MODEL_ID = 300;

export function parseModel(id: string): ModelKind | undefined {
  // Printable ids only: no control characters to smuggle into a lookup or a log line.
  if (id.length > MAX_MODEL_ID || ![...id].every((c) => c >= " ")) return undefined;
  if (id === "rlm") return { kind: "rlm" };
  const slash = id.indexOf("/");
  if (slash < 0) return id === "offline" ? { kind: "provider", id: "offline/offline" } : undefined;
  const head = id.slice(0, slash);
  const rest = id.slice(slash + 1);
  if (rest === "") return undefined;
  switch (head) {
    case "rlm":
      return { kind: "rlm", root: rest };
    case "agent":
      return { kind: "agent", ref: rest };
    case "fleet":
      return { kind: "fleet", ref: rest };
    case "search": {
      const global = rest.endsWith("/global");
      const index = global ? rest.slice(0, -"/global".length) : rest;
      return index && !index.includes("/")
        ? { kind: "search", index, method: global ? "global" : "local" }
        : undefined;
    }
    default:
      return { kind: "provider", id };
  }
}

/** The access-token scope each kind needs: the family whose work it does. */
export function scopeOf(kind: ModelKind["kind"]): Scope {
  switch (kind) {
    case "provider":
      return "chat";
    case "rlm":
      return "turns";
    case "agent":
    case "fleet":
      return "agents";
    case "search":
      return "search";
  }
}

/** `owned_by` in the model list: what kind of model it is. */
export const OWNED_BY: Record<ModelKind["kind"], string> = {
  provider: "atrium-provider",
  rlm: "atrium-rlm",
  agent: "atrium-agent",
  fleet: "atrium-fleet",
  search: "atrium-search",
};
