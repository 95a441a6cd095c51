/**
 * The helpers every family shares (server/lib, server/http, server/models): ids, the clock, paging, the
 * stream signal, the "invalid request" error, a model reply's text.
 */
import { describe, expect, test } from "bun:test";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { Paging } from "../../schemas/common.ts";
import { requestOrShutdown } from "../../server/http/abort.ts";
import { invalidRequest, invalidValue } from "../../server/http/errors.ts";
import { pageOf } from "../../server/http/paging.ts";
import { isoNow } from "../../server/lib/clock.ts";
import { newId } from "../../server/lib/ids.ts";
import { replyFailed, replyText, replyThinking } from "../../server/models/reply.ts";

describe("newId", () => {
  test("turns' form: the prefix and 32 hex digits; agents' form keeps the UUID's dashes", () => {
    expect(newId("ses")).toMatch(/^ses_[0-9a-f]{32}$/);
    expect(newId("agent", "uuid")).toMatch(
      /^agent_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });

  test("never repeats", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("run")));
    expect(ids.size).toBe(10_000);
  });
});

test("isoNow is the clock's time in ISO 8601 UTC with milliseconds", () => {
  expect(isoNow(() => Date.UTC(2024, 1, 29, 23, 59, 58, 7))).toBe("2024-02-29T23:59:58.007Z");
  const before = Date.now();
  const now = Date.parse(isoNow());
  expect(now).toBeGreaterThanOrEqual(before);
  expect(now).toBeLessThanOrEqual(Date.now());
});

test("pageOf applies the Paging schema's defaults and keeps what was asked", () => {
  expect(pageOf({})).toEqual({
    limit: Paging.properties.limit.default,
    offset: Paging.properties.offset.default,
  });
  expect(pageOf({})).toEqual({ limit: 50, offset: 0 });
  expect(pageOf({ limit: 200, offset: 7 })).toEqual({ limit: 200, offset: 7 });
});

describe("requestOrShutdown", () => {
  test("aborts when the client goes away", () => {
    const client = new AbortController();
    const signal = requestOrShutdown(
      new Request("http://x/", { signal: client.signal }),
      new AbortController().signal,
    );
    expect(signal.aborted).toBe(false);
    client.abort();
    expect(signal.aborted).toBe(true);
  });

  test("aborts when the server starts shutting down", () => {
    const shutdown = new AbortController();
    const signal = requestOrShutdown(new Request("http://x/"), shutdown.signal);
    shutdown.abort();
    expect(signal.aborted).toBe(true);
  });
});

test("invalidRequest says where the first issue is and how many more, and keeps every issue", () => {
  const one = invalidValue(["body", "model"], "not a provider/model id");
  expect({ kind: one.kind, message: one.message, issues: one.options.issues }).toEqual({
    kind: "invalid",
    message: "Invalid request: body.model: not a provider/model id",
    issues: [{ loc: ["body", "model"], msg: "not a provider/model id", type: "value_error" }],
  });
  const issues = [
    { loc: ["body", "a"], msg: "missing", type: "missing" },
    { loc: ["body", "b"], msg: "too long", type: "string_too_long" },
  ];
  const two = invalidRequest(issues);
  expect(two.message).toBe("Invalid request: body.a: missing (and 1 more)");
  expect(two.options.issues).toEqual(issues);
});

test("a reply's text is its text parts in order; thinking and tool calls stay out", () => {
  const reply = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "let me see" },
      { type: "text", text: "Hello, " },
      { type: "toolCall", id: "c1", name: "read", arguments: {} },
      { type: "text", text: "world" },
      { type: "thinking", thinking: " done" },
    ],
    stopReason: "stop",
  } as unknown as AssistantMessage;
  expect(replyText(reply)).toBe("Hello, world");
  expect(replyThinking(reply)).toBe("let me see done");
  expect(replyFailed(reply)).toBe(false);
  for (const stopReason of ["error", "aborted"] as const)
    expect(replyFailed({ ...reply, stopReason })).toBe(true);
});
