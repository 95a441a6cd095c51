/**
 * Budgets that model code cannot stretch (real pyodide, real SQLite, scripted models): a step's clock is
 * wall-clock through host tools and pauses only for model calls, which have their own deadline; a turn
 * has a deadline; tool calls, stored events and stored bytes per turn and per step are capped with a
 * visible warning; the SUBMIT answer and every stored text are cut; the per-owner quota refuses writes
 * from the Files API, uploads and the sandbox, counting whatever else the workspace folder holds.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { LOCAL_IDENTITY } from "../../server/auth/identity.ts";
import type { PolicySettings } from "../../server/config/policy-schema.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import type { TestApp } from "../helpers/app.ts";
import { type ScriptedModel, scriptedModel } from "../helpers/faux.ts";
import { createSession, type Ev, runTurn, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(180_000);

const QUOTA = 20_000;
let t: TestApp;
let rlm: PolicySettings["rlm"];
let saved: PolicySettings["rlm"];
beforeAll(async () => {
  t = await turnsApp({
    edits: [
      ["step_timeout_seconds = 60", "step_timeout_seconds = 2"],
      ["workspace_quota_bytes = 1073741824", `workspace_quota_bytes = ${QUOTA}`],
    ],
  });
  rlm = t.ctx.config.policy.settings.rlm;
  saved = { ...rlm };
});
afterAll(() => t.close());
// Each test narrows the caps it exercises on the app's live settings; they are read per turn.
afterEach(() => {
  Object.assign(rlm, saved);
  t.ctx.config.policy.settings.model.id = "";
});

const blocks = (...code: string[]) => code.map((c) => `\`\`\`python\n${c}\n\`\`\``).join("\n");
const outputs = (events: Ev[]) =>
  events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output as string);
const warnings = (events: Ev[]) => events.filter((e) => e.type === "warning").map((e) => e.code as string);
const terminal = (events: Ev[]) =>
  events.filter((e) => e.type === "turn_finish" || e.type === "turn_error" || e.type === "turn_cancelled");

async function stored(runId: string): Promise<{ count: number; bytes: number }> {
  const row = await t.ctx.database.get<{ count: number; bytes: number }>(
    "SELECT count(*) AS count, coalesce(sum(length(payload)), 0) AS bytes FROM turn_events WHERE run_id = ?",
    [runId],
  );
  return row as { count: number; bytes: number };
}

const runIdOf = (events: Ev[]) => events.find((e) => e.type === "turn_start")?.runId as string;

describe("the step clock", () => {
  test("a loop of host tools is stopped at the step's wall-clock limit; its tool calls and events are capped", async () => {
    rlm.max_tool_calls = 50;
    rlm.max_events_per_step = 40;
    const session = await createSession(t);
    const loop = [
      "import time",
      "start = time.time()",
      "calls = 0",
      "while time.time() - start < 8:",
      "    try:",
      "        list_files()",
      "    except Exception as e:",
      "        last_error = str(e)",
      "    calls += 1",
      "print('finished', calls)",
    ].join("\n");
    const { events } = await runTurn(t, session, { text: blocks(loop, "print('after')") });
    const [first, second] = outputs(events);
    expect(first).toContain("ran longer than 2s");
    expect(first).not.toContain("finished");
    expect(second).toBe("after\n");
    expect(warnings(events).filter((c) => c === "tool_call_limit")).toHaveLength(1);
    expect(warnings(events).filter((c) => c === "step_event_limit")).toHaveLength(1);
    expect(events.filter((e) => e.type === "tool_call").length).toBeLessThanOrEqual(20);
    expect(terminal(events).map((e) => e.type)).toEqual(["turn_finish"]);
    expect((await stored(runIdOf(events))).count).toBeLessThan(60);
  });
});

describe("model calls from Python", () => {
  let model: ScriptedModel;
  beforeAll(() => {
    model = scriptedModel(t.ctx.models, []);
  });
  afterAll(() => model.dispose());

  test("pause the step clock and run under their own deadline", async () => {
    rlm.model_call_timeout_seconds = 3.5;
    t.ctx.config.policy.settings.model.id = model.id;
    const slow = (ms: number, answer: string) => async (_c: unknown, options?: { signal?: AbortSignal }) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        options?.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return fauxAssistantMessage(answer);
    };
    const code = [
      "a = llm_query('first')",
      "try:",
      "    b = llm_query('second')",
      "except Exception as e:",
      "    b = 'refused: ' + str(e)",
      "print(a)",
      "print(b)",
    ].join("\n");
    model.registration.setResponses([
      fauxAssistantMessage(`Ask twice.\n\`\`\`python\n${code}\n\`\`\``),
      // 2.5 s: longer than the 2 s step limit, within the 3.5 s model-call deadline.
      slow(2500, "slow answer"),
      // 10 s: cut at the model-call deadline.
      slow(10_000, "too late"),
      fauxAssistantMessage("```python\nSUBMIT(answer='done')\n```"),
    ]);
    const session = await createSession(t);
    const { events } = await runTurn(t, session, { text: "ask" });
    const [output] = outputs(events);
    expect(output).toContain("slow answer");
    expect(output).toContain("refused: the model call ran past its limit of 3.5 s");
    expect(output).not.toContain("too late");
    expect(output).not.toContain("ran longer than");
    expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
  });
});

describe("the turn deadline", () => {
  test("a turn past its overall time limit fails with turn_timeout, and history shows it", async () => {
    rlm.turn_timeout_seconds = 3;
    const session = await createSession(t);
    const step = "import time\ntime.sleep(1.5)\nprint('step')";
    const { events } = await runTurn(t, session, { text: blocks(step, step, step, step) });
    expect(outputs(events).length).toBeLessThan(4);
    expect(terminal(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn_error", code: "turn_timeout" });
    expect(events.at(-1)?.message).toBe("The turn ran past its time limit of 3 s");
    const history = await t.json<{ items: { status: string; error: { code: string } }[] }>(
      `/api/sessions/${session}/turns`,
    );
    expect(history.body.items.map((i) => [i.status, i.error?.code])).toEqual([["failed", "turn_timeout"]]);
  });
});

describe("stored sizes", () => {
  test("a 20 MB SUBMIT is cut with a warning; its events and history row stay small", async () => {
    // Building 20 MB in Python is slow on a loaded machine; this test is about sizes, not the step clock.
    rlm.step_timeout_seconds = 30;
    const session = await createSession(t);
    const { events } = await runTurn(t, session, { text: blocks("SUBMIT('A' * 20_000_000)") });
    expect(warnings(events)).toContain("answer_truncated");
    const answer = events.find((e) => e.type === "text");
    expect(answer?.text).toHaveLength(rlm.max_answer_chars);
    expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
    expect((await stored(runIdOf(events))).bytes).toBeLessThan(1_000_000);
    const row = (await t.ctx.database.get<{ n: number }>(
      "SELECT length(parts_json) AS n FROM turn_runs WHERE id = ?",
      [runIdOf(events)],
    )) as { n: number };
    expect(row.n).toBeLessThan(400_000);
    const history = await t.json<{ items: { messages: { parts: { type: string; text?: string }[] }[] }[] }>(
      `/api/sessions/${session}/turns`,
    );
    const text = history.body.items[0]?.messages[1]?.parts.find((p) => p.type === "text")?.text;
    expect(text).toHaveLength(rlm.max_answer_chars);
  });

  test("a huge structured field is cut in the stored event, with a warning", async () => {
    // Building 5 MB in Python can pass the 2 s step clock on a loaded machine; this test is about sizes.
    rlm.step_timeout_seconds = 30;
    const session = await createSession(t);
    const { events } = await runTurn(t, session, {
      text: blocks("SUBMIT(answer='ok', blob='B' * 5_000_000)"),
    });
    expect(warnings(events)).toContain("event_truncated");
    const value = events.find((e) => e.type === "structured_result")?.value as { blob: string };
    expect(value.blob.length).toBeLessThan(rlm.max_event_chars + 100);
    expect(value.blob.endsWith("more characters]")).toBe(true);
    expect((await stored(runIdOf(events))).bytes).toBeLessThan(1_000_000);
  });

  test("past the events per turn, the turn ends with event_limit after a warning", async () => {
    rlm.max_events_per_turn = 50;
    rlm.max_events_per_step = 40;
    const session = await createSession(t);
    const calls = "for i in range(30):\n    list_files()";
    const { events } = await runTurn(t, session, { text: blocks(calls, calls, "print('never')") });
    expect(warnings(events)).toContain("event_limit");
    expect(terminal(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn_error", code: "event_limit" });
    expect(outputs(events)).not.toContain("never\n");
    expect((await stored(runIdOf(events))).count).toBeLessThanOrEqual(52);
  });

  test("past the stored bytes per turn, the turn ends with event_limit after a warning", async () => {
    rlm.max_stored_bytes_per_turn = 65_536;
    const session = await createSession(t);
    const { events } = await runTurn(t, session, { text: blocks("print('x' * 70_000)", "print('never')") });
    expect(warnings(events)).toContain("event_limit");
    expect(events.at(-1)).toMatchObject({ type: "turn_error", code: "event_limit" });
    expect((await stored(runIdOf(events))).bytes).toBeLessThan(65_536 + 2_000);
  });
});

describe("the workspace quota", () => {
  const put = (path: string, content: string) =>
    t.json<{ error?: { code: string; message: string } }>("/api/files/content", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path, content, overwrite: true }),
    });

  test("Files API writes, uploads and the sandbox's writes past the owner's quota are refused clearly", async () => {
    expect((await put("quota/a.txt", "x".repeat(15_000))).status).toBe(200);
    const over = await put("quota/b.txt", "x".repeat(6_000));
    expect(over.status).toBe(413);
    expect(over.body.error?.code).toBe("workspace_quota_exceeded");
    expect(over.body.error?.message).toContain(`quota of ${QUOTA} bytes`);
    // Replacing a file counts only the difference.
    expect((await put("quota/a.txt", "x".repeat(16_000))).status).toBe(200);
    const append = await t.json<{ error: { code: string } }>("/api/files/append", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: "quota/a.txt", content: "y".repeat(5_000) }),
    });
    expect([append.status, append.body.error.code]).toEqual([413, "workspace_quota_exceeded"]);
    const form = new FormData();
    form.append("file", new File(["z".repeat(10_000)], "big.txt", { type: "text/plain" }));
    const upload = await t.json<{ error: { code: string } }>("/api/attachments", {
      method: "POST",
      body: form,
    });
    expect([upload.status, upload.body.error.code]).toEqual([413, "workspace_quota_exceeded"]);

    const session = await createSession(t);
    const attempt = (call: string) =>
      `try:\n    ${call}\n    print('written')\nexcept Exception as e:\n    print('refused:', e)`;
    const { events } = await runTurn(t, session, {
      text: blocks(
        attempt("write_file('quota/c.txt', 'y' * 10_000)"),
        attempt("create_artifact('big', 'y' * 10_000)"),
        attempt("write_file('quota/small.txt', 'ok')"),
      ),
    });
    const [file, artifact, small] = outputs(events);
    expect(file).toContain("refused: The workspace quota of 20000 bytes would be exceeded");
    expect(artifact).toContain("refused: The workspace quota of 20000 bytes would be exceeded");
    expect(small).toBe("written\n");
  });

  test("what a shell wrote anywhere in the workspace folder counts against the quota of API writes", async () => {
    const workspace = ownerFolders(t.dataDir, LOCAL_IDENTITY.id).workspace;
    expect((await put("quota/fits.txt", "f".repeat(1_000))).status).toBe(200);
    // Outside `files/`: where the agent's shell and a user's sandbox write.
    const planted = join(workspace, "agent-workspace", "build.log");
    mkdirSync(dirname(planted), { recursive: true });
    writeFileSync(planted, "l".repeat(3_000));
    const over = await put("quota/fits.txt", "f".repeat(2_000));
    expect([over.status, over.body.error?.code]).toEqual([413, "workspace_quota_exceeded"]);
    rmSync(planted);
    expect((await put("quota/fits.txt", "f".repeat(2_000))).status).toBe(200);
  });
});
