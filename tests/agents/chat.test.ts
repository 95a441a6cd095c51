/**
 * The WebSocket /v1/chat against a listening server, with scripted models: the connection handshake,
 * each coordination pattern (who spoke, in what order, with what prompt), temperature and memory in the
 * model call, max_turns, resume, end_session, invalid frames, refused connections and oversized frames.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { agentModel, as, chat, contributions, type ModelCall, speakers } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { waitFor } from "../helpers/wait.ts";

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

/** An agent backed by its own scripted model; `reply` sees the prompt. */
async function scriptedAgent(
  name: string,
  reply: (prompt: string, n: number) => string,
  extra: Record<string, unknown> = {},
  tokensPerSecond?: number,
): Promise<{ id: string; calls: ModelCall[] }> {
  const model = agentModel(t, reply, 40, { tokensPerSecond });
  const agent = (await api.post("/v1/agents", { name, role: `${name}-role`, model: model.id, ...extra }))
    .body;
  expect(agent.id).toBeString();
  return { ...agent, calls: model.calls };
}

async function fleet(pattern: string, agentIds: string[], config: Record<string, unknown> = {}) {
  const r = await api.post("/v1/fleets", {
    name: `${pattern} fleet`,
    type: "CUSTOM",
    agent_ids: agentIds,
    coordination_pattern: pattern,
    config,
  });
  expect(r.status).toBe(200);
  return r.body;
}

describe("one agent", () => {
  test("connected, then stream frames sharing a message_id, the agent named, temperature passed", async () => {
    const a = await scriptedAgent("Solo", (p) => `You said: ${p}`);
    const c = await chat(server.url, { target_id: a.id, target_type: "agent", temperature: "0.4" });
    const connected = await c.next((f) => f.type === "connected");
    expect(connected).toMatchObject({
      status: "connected",
      target: { id: a.id, type: "agent", name: "Solo" },
    });
    expect(connected.session_id).toStartWith("chat_");
    const frames = await c.ask("hello agent");
    const ids = new Set(frames.map((f) => f.message_id));
    expect(ids.size).toBe(1);
    expect(frames.every((f) => f.type === "stream")).toBe(true);
    expect(frames.slice(0, -1).every((f) => f.is_complete === false && f.metadata.agent_id === a.id)).toBe(
      true,
    );
    expect(frames.at(-1)).toMatchObject({ is_complete: true, chunk: "" });
    expect(frames.at(-1)?.metadata.agents).toEqual([{ agent_id: a.id, agent_name: "Solo", phase: "answer" }]);
    expect(frames.map((f) => f.chunk).join("")).toBe("You said: hello agent");
    expect(a.calls[0]?.temperature).toBe(0.4);
    expect(a.calls[0]?.system).toContain("You are Solo, Solo-role.");

    const single = await c.ask("once more", { stream: false });
    expect(single).toHaveLength(1);
    expect(single[0]).toMatchObject({ type: "response", content: "You said: once more" });
    expect(Date.parse(single[0]?.timestamp)).not.toBeNaN();
    c.close();
  });

  test("the agent's relevant memory is in its context; the agent's own temperature is the fallback", async () => {
    const a = await scriptedAgent("Rememberer", () => "ok", { config: { temperature: 0.9 } });
    await api.post("/v1/memory", {
      owner_id: a.id,
      owner_type: "agent",
      type: "CONTEXT",
      content: "The launch codename is BLUEBIRD",
    });
    await api.post("/v1/memory", {
      owner_id: a.id,
      owner_type: "agent",
      type: "CONTEXT",
      content: "Coffee at nine",
    });
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    await c.ask("What is the launch codename?");
    const call = a.calls[0];
    expect(call?.system).toContain("Relevant memory:\n- [CONTEXT] The launch codename is BLUEBIRD");
    expect(call?.system).not.toContain("Coffee");
    expect(call?.temperature).toBe(0.9);
    c.close();
  });

  test("a failing model gives an error frame and the socket stays usable", async () => {
    let fail = true;
    const a = await scriptedAgent("Flaky", () => {
      if (fail) {
        fail = false;
        throw new Error("provider exploded");
      }
      return "recovered";
    });
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    const failed = await c.ask("first");
    expect(failed.at(-1)).toMatchObject({ type: "error", code: "model_error" });
    expect(failed.at(-1)?.message).toContain("Flaky");
    expect(failed.at(-1)?.message_id).toBeString();
    const ok = await c.ask("second");
    expect(ok.map((f) => f.chunk).join("")).toBe("recovered");
    c.close();
  });
});

describe("coordination patterns", () => {
  test("sequential: each agent works on the previous output, in fleet order; max_turns bounds it", async () => {
    const a = await scriptedAgent("Drafter", () => "DRAFT-1");
    const b = await scriptedAgent("Editor", (p) => (p.includes("DRAFT-1") ? "EDITED-2" : "lost"));
    const c3 = await scriptedAgent("Polisher", (p) => (p.includes("EDITED-2") ? "POLISHED-3" : "lost"));
    const f = await fleet("sequential", [a.id, b.id, c3.id], { temperature: 0.1 });
    await api.post("/v1/memory", {
      owner_id: f.id,
      owner_type: "fleet",
      type: "PREFERENCES",
      content: "Every haiku ends with a kigo",
    });
    const c = await chat(server.url, { target_id: f.id, target_type: "fleet" });
    const frames = await c.ask("write a haiku", { stream: true });
    // The last agent gives the answer; the ones before it are members working towards it.
    expect(speakers(frames)).toEqual(["Drafter:member", "Editor:member", "Polisher:answer"]);
    expect(contributions(frames)).toEqual({
      "Drafter:member": "DRAFT-1",
      "Editor:member": "EDITED-2",
      "Polisher:answer": "POLISHED-3",
    });
    expect(b.calls[0]?.prompt).toContain("The previous agent, Drafter (Drafter-role), produced:\nDRAFT-1");
    expect([a, b, c3].map((x) => x.calls[0]?.temperature)).toEqual([0.1, 0.1, 0.1]);
    // The fleet's memory reaches every member.
    for (const x of [a, b, c3])
      expect(x.calls[0]?.system).toContain("- [PREFERENCES] Every haiku ends with a kigo");
    const final = await c.ask("again", { stream: false });
    expect(final[0]).toMatchObject({ type: "response", content: "POLISHED-3" });
    c.close();

    const bounded = await chat(server.url, { target_id: f.id, target_type: "fleet", max_turns: "2" });
    const short = await bounded.ask("short one");
    expect(speakers(short)).toEqual(["Drafter:member", "Editor:answer"]);
    bounded.close();
  });

  test("parallel: every member answers the same message, then the lead merges all answers", async () => {
    // Long replies streamed at a finite rate: members running at once interleave their frames.
    const long = (tag: string) => `from-${tag} ${"lorem ipsum dolor sit amet ".repeat(12)}`;
    const a = await scriptedAgent("Alpha", () => long("alpha"), {}, 2000);
    const b = await scriptedAgent("Beta", () => long("beta"), {}, 2000);
    const lead = await scriptedAgent("Merger", (p) =>
      p.includes("Merge their answers") ? "MERGED" : "merger-own",
    );
    const f = await fleet("parallel", [a.id, b.id, lead.id], { lead_agent_id: lead.id });
    const c = await chat(server.url, { target_id: f.id, target_type: "fleet" });
    const frames = await c.ask("compare options");
    const order = speakers(frames);
    expect(order.at(-1)).toBe("Merger:merge");
    expect(new Set(order.slice(0, -1))).toEqual(new Set(["Alpha:member", "Beta:member", "Merger:member"]));
    for (const agent of [a, b]) expect(agent.calls[0]?.prompt).toBe("compare options");
    const names = frames
      .filter((f) => f.type === "stream" && !f.is_complete)
      .map((f) => f.metadata.agent_name);
    expect(names.indexOf("Beta")).toBeLessThan(names.lastIndexOf("Alpha"));
    expect(names.indexOf("Alpha")).toBeLessThan(names.lastIndexOf("Beta"));
    const mergePrompt = lead.calls.find((call) => call.prompt.includes("Merge their answers"))?.prompt ?? "";
    for (const text of [long("alpha"), long("beta"), "merger-own"]) expect(mergePrompt).toContain(text);
    expect(contributions(frames)["Merger:merge"]).toBe("MERGED");
    c.close();
  });

  test("hierarchical: the lead plans and delegates, members do their subtasks, the lead synthesises", async () => {
    const lead = await scriptedAgent("Boss", (p) =>
      p.includes("team's results")
        ? "FINAL: shipped"
        : "1. Coder: write the parser\n2. Tester: test the parser\nnoise line",
    );
    const coder = await scriptedAgent("Coder", (p) => `code for <${p.split("\n")[0]}>`);
    const tester = await scriptedAgent("Tester", (p) => `tests for <${p.split("\n")[0]}>`);
    const idle = await scriptedAgent("Idle", () => "should not speak");
    const f = await fleet("hierarchical", [coder.id, tester.id, idle.id, lead.id], {
      lead_agent_id: lead.id,
    });
    const c = await chat(server.url, { target_id: f.id, target_type: "fleet" });
    const frames = await c.ask("build a parser", { stream: true });
    expect(speakers(frames)).toEqual(["Boss:plan", "Coder:member", "Tester:member", "Boss:synthesis"]);
    expect(coder.calls[0]?.prompt).toStartWith("write the parser");
    expect(tester.calls[0]?.prompt).toStartWith("test the parser");
    expect(lead.calls[0]?.prompt).toContain("- Coder (Coder-role");
    expect(lead.calls[1]?.prompt).toContain("code for <write the parser>");
    expect(lead.calls[1]?.prompt).toContain("tests for <test the parser>");
    expect(idle.calls).toHaveLength(0);
    expect(frames.at(-1)?.metadata.agents.map((s: { agent_name: string }) => s.agent_name)).toEqual([
      "Boss",
      "Coder",
      "Tester",
      "Boss",
    ]);
    c.close();
  });

  test("dynamic: each message goes to the members whose capabilities fit it", async () => {
    const reviewer = await scriptedAgent("Reviewer", () => "looks fine", { capabilities: ["CODE_REVIEW"] });
    const writer = await scriptedAgent("Writer", () => "docs written", { capabilities: ["DOCUMENTATION"] });
    const chatty = await scriptedAgent("Chatty", () => "hi!", { capabilities: ["CHAT"] });
    const f = await fleet("dynamic", [reviewer.id, writer.id, chatty.id]);
    const c = await chat(server.url, { target_id: f.id, target_type: "fleet" });
    expect(speakers(await c.ask("please review this diff"))).toEqual(["Reviewer:answer"]);
    expect(speakers(await c.ask("update the README documentation"))).toEqual(["Writer:answer"]);
    expect(speakers(await c.ask("the weather is nice"))).toEqual(["Chatty:answer"]);
    expect(speakers(await c.ask("anything", { capabilities: ["DOCUMENTATION", "CODE_REVIEW"] }))).toEqual([
      "Reviewer:answer",
      "Writer:answer",
    ]);
    c.close();
  });

  test("a target deleted mid-session: the next message gets an error and the socket closes with 4404", async () => {
    const a = await scriptedAgent("Ephemeral", () => "here");
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    await c.ask("hello");
    expect((await api.del(`/v1/agents/${a.id}`)).status).toBe(200);
    c.send({ type: "message", content: "still there?" });
    const closed = await c.closed;
    expect(closed).toEqual({ code: 4404, reason: "target not found" });
    expect(c.frames.at(-1)).toMatchObject({ type: "error", code: "target_not_found" });
  });

  test("inactive members are skipped; a fleet without active members refuses messages", async () => {
    const a = await scriptedAgent("On", () => "on");
    const b = await scriptedAgent("Off", () => "off", { status: "inactive" });
    const f = await fleet("sequential", [b.id, a.id]);
    const c = await chat(server.url, { target_id: f.id, target_type: "fleet" });
    expect(speakers(await c.ask("go"))).toEqual(["On:answer"]);
    await api.patch(`/v1/agents/${a.id}`, { status: "inactive" });
    const refused = await c.ask("go again");
    expect(refused).toEqual([expect.objectContaining({ type: "error", code: "target_inactive" })]);
    await api.patch(`/v1/agents/${a.id}`, { status: "active" });
    expect(speakers(await c.ask("back"))).toEqual(["On:answer"]);
    c.close();
  });
});

describe("sessions on the socket", () => {
  test("closing the socket mid-reply aborts the model call; nothing half-done is stored", async () => {
    const slow = await scriptedAgent("Slow", () => "word ".repeat(400), {}, 50);
    const c = await chat(server.url, { target_id: slow.id, target_type: "agent" });
    const { session_id } = await c.next((f) => f.type === "connected");
    c.send({ type: "message", content: "take your time" });
    await c.next((f) => f.type === "stream");
    c.close();
    await c.closed;
    await waitFor(() => slow.calls[0]?.signal?.aborted, { what: "the model call to be aborted" });
    const history = (await api.get(`/v1/chat/sessions/${session_id}/history`)).body.messages;
    expect(history.map((m: { type: string }) => m.type)).toEqual(["user"]);
  });

  test("resume by session_id keeps the conversation; end_session ends it for good", async () => {
    const a = await scriptedAgent("Memoryful", (p) => `echo ${p}`);
    const first = await chat(server.url, { target_id: a.id, target_type: "agent" });
    const { session_id } = await first.next((f) => f.type === "connected");
    await first.ask("my name is Zed");
    first.close();
    await first.closed;

    const again = await chat(server.url, { session_id });
    const connected = await again.next((f) => f.type === "connected");
    expect(connected).toMatchObject({ session_id, target: { id: a.id, type: "agent", name: "Memoryful" } });
    await again.ask("what is my name?");
    expect(a.calls[1]?.system).toContain(
      "Conversation so far:\nuser: my name is Zed\nMemoryful: echo my name is Zed",
    );
    const history = (await api.get(`/v1/chat/sessions/${session_id}/history`)).body;
    expect(history.messages.map((m: { type: string; content: string }) => [m.type, m.content])).toEqual([
      ["user", "my name is Zed"],
      ["assistant", "echo my name is Zed"],
      ["user", "what is my name?"],
      ["assistant", "echo what is my name?"],
    ]);

    again.send({ type: "end_session", session_id });
    const ended = await again.next((f) => f.type === "session_ended");
    expect(ended.session_id).toBe(session_id);
    expect(Date.parse(ended.timestamp)).not.toBeNaN();
    expect((await again.closed).code).toBe(1000);
    const list = (await api.get(`/v1/chat/sessions?target_id=${a.id}`)).body;
    expect(list.sessions[0]).toMatchObject({ session_id, status: "ended", message_count: 4 });

    const resumeEnded = await chat(server.url, { session_id });
    expect((await resumeEnded.closed).code).toBe(4410);
    expect(resumeEnded.frames[0]).toMatchObject({ type: "error", code: "session_ended" });
  });

  test("invalid frames get an error frame and the socket stays open", async () => {
    const a = await scriptedAgent("Patient", () => "still here");
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    await c.next((f) => f.type === "connected");
    const bad = [
      "not json",
      "{broken",
      "[1,2]",
      "42",
      JSON.stringify({ type: "dance" }),
      JSON.stringify({ type: "message" }),
      JSON.stringify({ type: "message", content: "x", context: "nope" }),
      JSON.stringify({ type: "message", content: "x", session_id: "other" }),
    ];
    for (const [i, frame] of bad.entries()) {
      c.send(frame);
      const error = await c.next((f) => f.type === "error", 1 + i);
      expect({ frame, code: error.code }).toEqual({
        frame,
        code: expect.stringMatching(/^(invalid_frame|session_mismatch)$/),
      });
    }
    expect(c.frames.filter((f) => f.type === "error")).toHaveLength(bad.length);
    const ok = await c.ask("are you there?");
    expect(ok.map((f) => f.chunk).join("")).toBe("still here");
    c.close();
  });

  test("refused connections: an error frame, then a close code and reason", async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ target_id: "agent_missing", target_type: "agent" }, 4404, "target_not_found"],
      [{ target_id: "fleet_missing", target_type: "fleet" }, 4404, "target_not_found"],
      [{ target_id: "x" }, 4400, "invalid_connection"],
      [{ target_id: "x", target_type: "robot" }, 4400, "invalid_connection"],
      [{ session_id: "chat_missing" }, 4404, "session_not_found"],
    ];
    const a = await scriptedAgent("Gate", () => "ok");
    cases.push([{ target_id: a.id, target_type: "agent", max_turns: "0" }, 4400, "invalid_connection"]);
    cases.push([{ target_id: a.id, target_type: "agent", temperature: "hot" }, 4400, "invalid_connection"]);
    for (const [query, code, errorCode] of cases) {
      const c = await chat(server.url, query);
      const closed = await c.closed;
      expect({ query, code: closed.code, error: c.frames[0]?.code }).toEqual({
        query,
        code,
        error: errorCode,
      });
      expect(closed.reason).toBe(errorCode.replaceAll("_", " "));
    }
  });

  test("a 1 MiB frame closes the socket with 1009; the server is unaffected", async () => {
    const a = await scriptedAgent("Sturdy", () => "fine");
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    await c.next((f) => f.type === "connected");
    c.send(JSON.stringify({ type: "message", content: "x".repeat(1024 * 1024) }));
    expect((await c.closed).code).toBe(1009);
    expect(a.calls).toHaveLength(0);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    const next = await chat(server.url, { target_id: a.id, target_type: "agent" });
    expect((await next.ask("still ok?")).map((f) => f.chunk).join("")).toBe("fine");
    next.close();
  });
});
