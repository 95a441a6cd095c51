/**
 * The turn SSE stream with the offline model (no provider configured: the fenced Python of the message
 * runs): event order and fields, compat chunks, both stream forms parsed by the AI SDK's own client,
 * idempotent replay and mismatch, every preparation failure, and bad input before streaming.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { parseJsonEventStream } from "@ai-sdk/provider-utils";
import { readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from "ai";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import type { TestApp } from "../helpers/app.ts";
import { readFrames } from "../helpers/streams.ts";
import { createSession, runTurn, turnRequest, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

let t: TestApp;
let session: string;
beforeAll(async () => {
  t = await turnsApp();
  session = await createSession(t);
});
afterAll(() => t.close());

const twoBlocks =
  "Compute:\n```python\nx = 6 * 7\nprint(x)\n```\nthen\n```python\nraise ValueError('boom')\n```\n```python\nprint(x + 1)\n```";

describe("turn stream", () => {
  test("an offline turn streams preparation, start, steps, text, usage and one terminal event, then [DONE]", async () => {
    const { response, frames, events } = await runTurn(t, session, { text: twoBlocks });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    expect(response.headers.get("x-ai-ui-message-stream")).toBe("v1");
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("turn_status");
    expect(events[0]).toEqual({
      type: "turn_status",
      phase: "preparation",
      status: "running",
      message: null,
    });
    const start = events.find((e) => e.type === "turn_start");
    expect(start).toMatchObject({ delivery: "live", sessionId: session });
    expect(start?.runId).toStartWith("run_");
    expect(start && "traceId" in start).toBe(false);
    expect(types.filter((ty) => ["turn_finish", "turn_error", "turn_cancelled"].includes(ty))).toEqual([
      "turn_finish",
    ]);
    expect(types.at(-1)).toBe("turn_finish");
    const outputs = events.filter((e) => e.type === "output" && !e.isDelta);
    expect(outputs.map((o) => o.step)).toEqual([1, 2, 3]);
    expect(outputs[0]?.output).toBe("42\n");
    // Python that raises: the traceback is the step's output and the turn goes on.
    expect(outputs[1]?.output).toContain("ValueError: boom");
    expect(outputs[2]?.output).toBe("43\n");
    expect(events.find((e) => e.type === "code")).toMatchObject({
      step: 1,
      code: "x = 6 * 7\nprint(x)",
      isDelta: false,
      final: true,
    });
    const text = events.find((e) => e.type === "text");
    expect(text).toMatchObject({ role: "assistant", final: true });
    expect(text?.text).toContain("43");
    expect(events.find((e) => e.type === "usage")).toMatchObject({ iterations: 3 });
    expect(events.at(-1)).toMatchObject({ status: "completed", finishReason: "stop", checkpointVersion: 1 });
    // Every spec event is followed by its compatibility chunks (frames without an event line).
    const compat = frames.filter((f) => !f.event && f.data !== "[DONE]").map((f) => JSON.parse(f.data).type);
    expect(compat).toContain("start");
    expect(compat).toContain("data-status");
    expect(compat).toContain("data-code");
    expect(compat).toContain("text-delta");
    expect(compat).toContain("data-usage");
    expect(compat.at(-1)).toBe("finish");
  });

  test("SUBMIT with fields gives a structured_result and the answer as text", async () => {
    const { events } = await runTurn(t, session, { text: "```python\nSUBMIT(answer='three', count=3)\n```" });
    expect(events.find((e) => e.type === "structured_result")).toEqual({
      type: "structured_result",
      schemaId: "submit",
      schemaVersion: "1",
      value: { answer: "three", count: 3 },
    });
    expect(events.find((e) => e.type === "text")?.text).toBe("three");
  });

  test("a message without Python gets the offline model's honest answer", async () => {
    const { events } = await runTurn(t, session, { text: "What is the capital of France?" });
    const text = events.find((e) => e.type === "text");
    expect(text?.text).toContain("No model is configured");
    expect(events.at(-1)?.type).toBe("turn_finish");
  });

  test("the AI SDK client parses both stream forms' chunks without errors", async () => {
    const text = "```python\nprint('hi')\n```";
    const response = await t.request(
      `/api/sessions/${session}/turns?format=ui-message-stream`,
      turnRequest({ text }),
    );
    const [forParse, forRead] = (response.body as ReadableStream<Uint8Array>).tee();
    const parsed: UIMessageChunk[] = [];
    const reader = parseJsonEventStream({ stream: forParse, schema: uiMessageChunkSchema }).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (!r.value.success) throw new Error(`chunk rejected: ${JSON.stringify(r.value)}`);
      parsed.push(r.value.value);
    }
    const types = parsed.map((c) => c.type);
    expect(types[0]).toBe("data-status");
    expect(types).toContain("start");
    expect(types).toContain("data-code");
    expect(types).toContain("data-output");
    expect(types.at(-1)).toBe("finish");
    expect(types).not.toContain("turn_start");

    const chunks = parseJsonEventStream({ stream: forRead, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (result.success) controller.enqueue(result.value);
        },
      }),
    );
    let last: { parts: { type: string; text?: string }[] } | undefined;
    for await (const message of readUIMessageStream({
      stream: chunks,
      onError: (e) => {
        throw e;
      },
    }))
      last = message;
    expect(last?.parts.some((p) => p.type === "data-output")).toBe(true);
    expect(last?.parts.find((p) => p.type === "text")?.text).toContain("hi");

    // The default form: every frame without an event line is a valid UIMessageChunk too.
    const plain = await readFrames(await t.request(`/api/sessions/${session}/turns`, turnRequest({ text })));
    const compat = plain.filter((f) => !f.event && f.data !== "[DONE]");
    expect(compat.length).toBeGreaterThan(5);
    const schema = uiMessageChunkSchema();
    for (const f of compat) {
      const result = await schema.validate?.(JSON.parse(f.data));
      expect(result?.success).toBe(true);
    }
  });

  test("same key and input replays the committed turn; other input is a mismatch", async () => {
    const key = crypto.randomUUID();
    const body = { text: "```python\nprint(7)\n```" };
    const first = await runTurn(t, session, body, key);
    const again = await runTurn(t, session, body, key);
    const strip = (events: typeof first.events) =>
      events.filter((e) => e.type !== "turn_status").map(({ delivery: _d, durationMs: _m, ...rest }) => rest);
    expect(again.events.find((e) => e.type === "turn_start")?.delivery).toBe("replay");
    expect(strip(again.events)).toEqual(strip(first.events));
    expect(again.frames.at(-1)?.data).toBe("[DONE]");

    const other = await runTurn(t, session, { text: "```python\nprint(8)\n```" }, key);
    expect(other.events.filter((e) => e.type !== "turn_status").map((e) => e.type)).toEqual([
      "turn_error",
      "turn_finish",
    ]);
    expect(other.events.find((e) => e.type === "turn_error")).toMatchObject({
      message: "Idempotency key input mismatch",
    });
    const history = await t.json<{ items: { runId: string }[] }>(`/api/sessions/${session}/turns`);
    const runId = first.events.find((e) => e.type === "turn_start")?.runId;
    expect(history.body.items.filter((i) => i.runId === runId)).toHaveLength(1);
  });

  test("preparation failures end with turn_error then turn_finish, in the contract's words", async () => {
    const failure = async (sessionId: string, body: unknown) => {
      const { frames, events } = await runTurn(t, sessionId, body);
      expect(frames.at(-1)?.data).toBe("[DONE]");
      expect(events.map((e) => e.type).filter((ty) => ty !== "turn_status")).toEqual([
        "turn_error",
        "turn_finish",
      ]);
      expect(events.find((e) => e.type === "turn_finish")).toMatchObject({ status: "failed" });
      const compat = frames
        .filter((f) => !f.event && f.data !== "[DONE]")
        .map((f) => JSON.parse(f.data).type);
      expect(compat.slice(-2)).toEqual(["error", "finish"]);
      return events.find((e) => e.type === "turn_error")?.message;
    };
    expect(await failure("ses_missing", { text: "hi" })).toBe("Session not found");
    expect(
      await failure(session, {
        text: "hi",
        skill_selections: [{ id: "no-such-skill", expected_version: "1.0.0" }],
      }),
    ).toBe("Invalid Skill selection");
    expect(
      await failure(session, {
        text: "hi",
        skill_selections: [{ id: "data-analysis", expected_version: "9.9.9" }],
      }),
    ).toBe("Invalid Skill selection");
    expect(await failure(session, { text: "hi", attachment_ids: ["att_unknown"] })).toBe("Invalid request");

    // Another turn running in the session.
    const busy = await createSession(t);
    const long = await t.request(
      `/api/sessions/${busy}/turns`,
      turnRequest({ text: "```python\nwhile True:\n    pass\n```" }),
    );
    const reader = (long.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: code")) seen += new TextDecoder().decode((await reader.read()).value);
    expect(await failure(busy, { text: "hi" })).toBe("A Turn is already running");
    const runId = seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1];
    const cancel = await t.request(`/api/runs/${runId}/cancellation`, { method: "PUT" });
    expect(cancel.status).toBe(202);
    await reader.cancel();
  });

  test("bad input before streaming: missing key 400, long text 422, malformed skill_selections 422", async () => {
    const code = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;
    const noKey = await t.request(`/api/sessions/${session}/turns`, turnRequest({ text: "hi" }, null));
    expect(noKey.status).toBe(400);
    expect(await code(noKey)).toBe("idempotency_key_required");
    const emptyKey = await t.request(`/api/sessions/${session}/turns`, turnRequest({ text: "hi" }, " "));
    expect([emptyKey.status, await code(emptyKey)]).toEqual([400, "idempotency_key_required"]);
    const longKey = await t.request(
      `/api/sessions/${session}/turns`,
      turnRequest({ text: "hi" }, "k".repeat(201)),
    );
    expect([longKey.status, await code(longKey)]).toEqual([400, "invalid_idempotency_key"]);
    const blank = await t.request(`/api/sessions/${session}/turns`, turnRequest({ text: "  \n" }));
    expect([blank.status, await code(blank)]).toEqual([422, "invalid_request"]);
    const long = await t.request(
      `/api/sessions/${session}/turns`,
      turnRequest({ text: "x".repeat(100_001) }),
    );
    expect(long.status).toBe(422);
    for (const skill_selections of [
      "data-analysis",
      [{ id: "data-analysis" }],
      [
        { id: "a", expected_version: "1" },
        { id: "a", expected_version: "1" },
      ],
      [1, 2, 3, 4, 5].map((i) => ({ id: `s${i}`, expected_version: "1" })),
      [{ id: "a", expected_version: "1", extra: true }],
      [
        { id: "a", expected_version: "1" },
        { id: "a", expected_version: "2" },
      ],
      [{ id: "", expected_version: "1" }],
      [{ id: "a", expected_version: 1 }],
      [null],
      null,
      {},
      // Array-likes and strings are not arrays, whatever a normalizer would make of them.
      { length: 1, 0: { id: "a", expected_version: "1" } },
      "ab",
    ]) {
      const r = await t.request(
        `/api/sessions/${session}/turns`,
        turnRequest({ text: "hi", skill_selections }),
      );
      expect(r.status).toBe(422);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_skill_selection");
    }
    const notJson = await t.request(`/api/sessions/${session}/turns`, { ...turnRequest({}), body: "{" });
    expect(notJson.status).toBe(422);
    // Nothing of it became a run.
    const history = await t.json<{ items: unknown[] }>(`/api/sessions/${session}/turns?limit=200`);
    const runs = await t.ctx.database.get("SELECT count(*) AS n FROM turn_runs WHERE session_id = ?", [
      session,
    ]);
    expect(runs).toEqual({ n: history.body.items.length });
  });

  test("the OpenAPI document declares the Idempotency-Key header and the skill selection shape", async () => {
    type Operation = {
      parameters: Record<string, unknown>[];
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    };
    const doc = (await (await t.request("/swagger/json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const post = doc.paths["/api/sessions/{session_id}/turns"]?.post as Operation;
    const header = post.parameters.find((p) => p.in === "header");
    expect(header).toMatchObject({
      name: "idempotency-key",
      required: true,
      schema: { type: "string", minLength: 1, maxLength: 200 },
    });
    const body = post.requestBody.content["application/json"]?.schema.properties ?? {};
    expect(body.skill_selections).toMatchObject({
      type: "array",
      maxItems: 4,
      items: { type: "object", required: ["id", "expected_version"] },
    });
  });
});

describe("preparation timing and availability", () => {
  test("keep-alives repeat while preparing; a slow preparation times out", async () => {
    const slow = await turnsApp({
      env: { APP_SANDBOX_WARM: "0" },
      edits: [
        ["heartbeat_seconds = 5", "heartbeat_seconds = 0.05"],
        ["preparation_timeout_seconds = 30", "preparation_timeout_seconds = 0.4"],
      ],
    });
    // An interpreter that never gets ready (and may take a minute to): the deadline is what ends the
    // preparation, however fast pyodide starts from the snapshot on this machine (about 0.3 s idle).
    slow.family("turns").runtime.sandbox.use(
      new InterpreterPool({
        isolation: "none",
        command: [process.execPath, "-e", "setInterval(() => {}, 1e6)"],
        startTimeoutMs: 60_000,
      }),
    );
    try {
      const id = await createSession(slow);
      const key = crypto.randomUUID();
      const { events } = await runTurn(slow, id, { text: "```python\nprint(1)\n```" }, key);
      const statuses = events.filter((e) => e.type === "turn_status");
      expect(statuses.length).toBeGreaterThanOrEqual(3);
      expect(events.filter((e) => e.type !== "turn_status").map((e) => e.type)).toEqual([
        "turn_error",
        "turn_finish",
      ]);
      expect(events.find((e) => e.type === "turn_error")?.message).toBe("Turn preparation timed out");
      const history = await slow.json<{ items: { status: string }[] }>(`/api/sessions/${id}/turns`);
      expect(history.body.items.map((i) => i.status)).toEqual(["failed"]);
      // The failed turn is durable: retrying its key replays the failure, closed the same way.
      const again = await runTurn(slow, id, { text: "```python\nprint(1)\n```" }, key);
      expect(again.events.filter((e) => e.type !== "turn_status").map((e) => [e.type, e.message])).toEqual([
        ["turn_error", "Turn preparation timed out"],
        ["turn_finish", undefined],
      ]);
    } finally {
      await slow.close();
    }
  });

  test("live turns switched off: Turn is unavailable", async () => {
    const off = await turnsApp({
      env: { APP_SANDBOX_WARM: "0" },
      edits: [["live_enabled = true", "live_enabled = false"]],
    });
    try {
      const id = await createSession(off);
      const { events } = await runTurn(off, id, { text: "hi" });
      expect(events.find((e) => e.type === "turn_error")?.message).toBe("Turn is unavailable");
      expect(events.at(-1)?.type).toBe("turn_finish");
    } finally {
      await off.close();
    }
  });
});
