/**
 * Schemas shared by every family: error envelopes (docs/design.md §8), health and root probes, list
 * paging. Schemas only: no runtime code.
 */
import { type IntegerOptions, Type } from "@sinclair/typebox";
import { t } from "elysia";

/**
 * An integer of a JSON body or response. Elysia's `t.Integer` is for query strings and path parameters
 * (`Paging`): it also admits the integer's text ("5"), which the API document then shows as a string or
 * an integer, and it compiles a checker as it is made (about 0.1 ms each, at every start).
 */
export const Integer = (options?: IntegerOptions) => Type.Integer(options);

/** One validation issue, FastAPI's shape: where, what, which kind. */
export const Issue = t.Object({
  loc: t.Array(t.Union([t.String(), Integer()]), {
    description: "request part first, then keys and indexes",
  }),
  msg: t.String(),
  type: t.String({ description: "missing, string_type, int_parsing, enum, json_invalid, ..." }),
});

/** chat: `{message, errors?}`; 400 for validation. */
export const ChatError = t.Object(
  { message: t.String(), errors: t.Optional(t.Array(Issue)) },
  { description: "chat error body" },
);

/** turns: the closed envelope `{error: {code, message}}`. */
export const TurnsError = t.Object(
  { error: t.Object({ code: t.String({ examples: ["invalid_request"] }), message: t.String() }) },
  { description: "turns error envelope" },
);

/** search and agents: FastAPI's 422 body. */
export const HTTPValidationError = t.Object({ detail: t.Array(Issue) }, { description: "validation error" });

/** search and agents: FastAPI's body for every other error. */
export const DetailError = t.Object({ detail: t.String() }, { description: "error" });

export const Health = t.Object({
  name: t.String({ examples: ["Atrium"] }),
  version: t.String({ examples: ["0.1.0"] }),
});

/** What confines model-written code on this server (turns' Python, the local-mode shell). */
export const SandboxReport = t.Object(
  {
    isolation: t.Union([t.Literal("bubblewrap"), t.Literal("none")], {
      description: "bubblewrap: code runs jailed; none: no jail (protected mode then refuses to run code)",
    }),
    capabilities: t.Union([t.Literal("dropped"), t.Literal("unchanged")], {
      description: "dropped: the jail holds no capability, even when the server runs as root",
    }),
    user: t.Union([t.Literal("unprivileged"), t.Literal("root_without_capabilities"), t.Literal("server")], {
      description:
        "whom the interpreters run as on the host: a real unprivileged uid; host root without any capability (a root server where unprivileged user namespaces are off); or the server's own user (no jail)",
    }),
    processLimit: t.Union([t.Literal("cgroup"), t.Literal("uid"), t.Literal("rlimit"), t.Literal("none")], {
      description:
        "what bounds the processes of one sandbox: a pids cgroup, RLIMIT_NPROC under a real unprivileged uid (root without cgroups), RLIMIT_NPROC (non-root), or nothing",
    }),
    memoryLimit: t.Union([t.Literal("cgroup"), t.Literal("watchdog"), t.Literal("none")], {
      description:
        "what bounds one sandbox's real memory: a memory cgroup, or the server stopping it past the limit",
    }),
    cpuLimit: t.Union([t.Literal("cgroup"), t.Literal("none")], {
      description:
        "what gives each sandbox its share of the CPU and its ceiling (policy sandbox.cpu_weight, cpu_cores): a cpu cgroup, or nothing",
    }),
    seccomp: t.Union([t.Literal("filter"), t.Literal("none")], {
      description:
        "filter: mount, ptrace, bpf, keyctl, namespaces, io_uring, netlink and vsock sockets and the like fail inside the jail",
    }),
  },
  { description: "The sandbox in force (policy [sandbox] sets its limits)" },
);
export type SandboxReport = typeof SandboxReport.static;

export const Ready = t.Object({
  status: t.Literal("ready"),
  name: t.String(),
  version: t.String(),
  database: t.Union([t.Literal("ok"), t.Literal("not_configured")]),
  mode: t.Union([t.Literal("local"), t.Literal("protected")]),
  sandbox: SandboxReport,
});

export const ApiHealth = t.Object({
  status: t.Literal("ok"),
  runtime: t.Union([t.Literal("starting"), t.Literal("ready"), t.Literal("stopping")], {
    description: "readiness of the chat runtime",
  }),
});

export const RootProbe = t.Object({
  message: t.String(),
  name: t.String(),
  version: t.String(),
  docs: t.Literal("/swagger"),
});

/** A redirect: the target is in the Location header, the body is empty. */
export const Redirect = t.String({
  description: "Redirect: the target is in the Location header; empty body",
});

/** Page bounds of every list route (docs/design.md §9); server/http/paging.ts applies the defaults. */
export const PAGE_LIMIT = { min: 1, max: 200, default: 50 } as const;
export const PageLimit = t.Integer({
  minimum: PAGE_LIMIT.min,
  maximum: PAGE_LIMIT.max,
  default: PAGE_LIMIT.default,
});
export const PageOffset = t.Integer({ minimum: 0, default: 0 });

/** `limit` 1..200 (default 50) and `offset` >= 0 for every list route. */
export const Paging = t.Object({ limit: t.Optional(PageLimit), offset: t.Optional(PageOffset) });
