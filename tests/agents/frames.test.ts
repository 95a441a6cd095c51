/**
 * Client frames on /v1/chat are checked against their schemas (`ClientMessageFrame`, `ClientEndFrame`
 * in schemas/agents.ts) on a listening server: every limit the schema declares holds on the socket
 * (content length, context id lengths and types, the capability enum), a frame that breaks one gets an
 * `invalid_frame` error frame naming the field, nothing is stored or sent to a model, and the socket
 * stays open for the next message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { agentModel, as, type ChatClient, chat, type ModelCall } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let api: ReturnType<typeof as>;
beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
  api = as(t);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const MAX_CONTENT = 100_000;

async function connectedAgent(name: string): Promise<{ c: ChatClient; calls: ModelCall[]; session: string }> {
  const model = agentModel(t, (prompt) => `got ${prompt.length} characters`);
  const agent = (await api.post("/v1/agents", { name, role: "checker", model: model.id })).body;
  const c = await chat(server.url, { target_id: agent.id, target_type: "agent" });
  const connected = await c.next((f) => f.type === "connected");
  return { c, calls: model.calls, session: connected.session_id };
}

/**
 * Sends one frame and resolves with the frame that answers it: an error, or the end of a reply (so a
 * frame that should have been refused but was answered fails the test at once instead of timing out).
 */
async function refused(c: ChatClient, frame: unknown) {
  const from = c.frames.length;
  c.send(frame);
  const answer = await c.next(
    (f) => f.type === "error" || f.type === "response" || (f.type === "stream" && f.is_complete),
    from,
  );
  expect({ frame, answer: answer.type }).toEqual({ frame, answer: "error" });
  return answer;
}

describe("client frames follow their schemas", () => {
  test("content over maxLength is an invalid_frame error; nothing reaches the model; the socket stays open", async () => {
    const { c, calls, session } = await connectedAgent("Bounded");
    const error = await refused(c, { type: "message", content: "x".repeat(MAX_CONTENT + 1) });
    expect(error).toMatchObject({ type: "error", code: "invalid_frame", loc: ["content"] });
    expect(error.message).toContain(String(MAX_CONTENT));
    expect(calls).toHaveLength(0);
    expect((await api.get(`/v1/chat/sessions/${session}/history`)).body.messages).toEqual([]);

    // The limit is the schema's, not a smaller one: exactly maxLength is a message like any other.
    const reply = await c.ask("y".repeat(MAX_CONTENT));
    expect(reply.map((f) => f.chunk).join("")).toBe(`got ${MAX_CONTENT} characters`);
    expect(calls).toHaveLength(1);
    expect(c.frames.filter((f) => f.type === "error")).toHaveLength(1);
    c.close();
  });

  test("context fields are checked: id lengths and types, stream a boolean, capabilities from the enum", async () => {
    const { c, calls, session } = await connectedAgent("Strict");
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ thread_id: "t".repeat(101) }, ["context", "thread_id"]],
      [{ thread_id: 5 }, ["context", "thread_id"]],
      [{ parent_id: "" }, ["context", "parent_id"]],
      [{ parent_id: ["msg_1"] }, ["context", "parent_id"]],
      [{ stream: "no" }, ["context", "stream"]],
      [{ capabilities: "CHAT" }, ["context", "capabilities"]],
      [{ capabilities: ["CHAT", "TELEPATHY"] }, ["context", "capabilities", 1]],
    ];
    for (const [context, loc] of cases) {
      const error = await refused(c, { type: "message", content: "hello", context });
      expect({ context, code: error.code, loc: error.loc }).toEqual({ context, code: "invalid_frame", loc });
      expect(error.message).toStartWith(`${loc.join(".")}: `);
    }
    expect(calls).toHaveLength(0);
    expect((await api.get(`/v1/chat/sessions/${session}/history`)).body.messages).toEqual([]);

    // Keys the schema leaves open are kept open: other context keys pass.
    const reply = await c.ask("still fine?", { stream: false, client_tag: { any: "thing" } });
    expect(reply).toHaveLength(1);
    expect(reply[0]).toMatchObject({ type: "response", content: "got 11 characters" });
    c.close();
  });

  test("the earlier wording holds: empty or whitespace content, a non-object context, an unknown type", async () => {
    const { c, calls } = await connectedAgent("Worded");
    const cases: [unknown, string, unknown][] = [
      [{ type: "message" }, "content must be a non-empty string", ["content"]],
      [{ type: "message", content: "" }, "content must be a non-empty string", ["content"]],
      [{ type: "message", content: " \n\t " }, "content must be a non-empty string", ["content"]],
      [{ type: "message", content: 7 }, "content must be a non-empty string", ["content"]],
      [{ type: "message", content: "x", context: [] }, "context must be an object", ["context"]],
      [{ type: "shout" }, 'Unknown frame type "shout"; expected message or end_session', undefined],
      ["[1]", "A frame must be a JSON object with a type: message or end_session", undefined],
    ];
    for (const [frame, message, loc] of cases) {
      const error = await refused(c, frame);
      expect({ frame, code: error.code, message: error.message, loc: error.loc }).toEqual({
        frame,
        code: "invalid_frame",
        message,
        loc,
      });
    }
    expect(calls).toHaveLength(0);
    c.close();
  });

  test("end_session is checked too: another session's id is session_mismatch; extra keys are allowed", async () => {
    const { c, session } = await connectedAgent("Ender");
    const mismatch = await refused(c, { type: "end_session", session_id: "chat_other" });
    expect(mismatch).toMatchObject({ code: "session_mismatch" });
    c.send({ type: "end_session", session_id: session, reason: "done" });
    expect(await c.next((f) => f.type === "session_ended")).toMatchObject({ session_id: session });
    expect((await c.closed).code).toBe(1000);
  });
});
