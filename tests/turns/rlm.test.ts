/**
 * The RLM loop with scripted models (pi-ai's faux provider): a multi-step turn (code → output →
 * llm_query → SUBMIT), child runs in parallel with child_progress and depth 1, and the policy's caps.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { parseJsonEventStream } from "@ai-sdk/provider-utils";
import { type Context, fauxAssistantMessage, fauxText, fauxThinking } from "@mariozechner/pi-ai";
import { readUIMessageStream, uiMessageChunkSchema } from "ai";
import type { TestApp } from "../helpers/app.ts";
import { type ScriptedModel, scriptedModel } from "../helpers/faux.ts";
import { createSession, type Ev, runTurn, turnRequest, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const py = (code: string, before = "") => fauxAssistantMessage(`${before}\n\`\`\`python\n${code}\n\`\`\``);
const lastUser = (context: Context) => {
  const m = context.messages.at(-1);
  return typeof m?.content === "string" ? m.content : "";
};

let t: TestApp;
let model: ScriptedModel;
beforeAll(async () => {
  t = await turnsApp({
    env: { APP_SANDBOX_WARM: "2" },
    edits: [["recursion_enabled = false", "recursion_enabled = true"]],
  });
  model = scriptedModel(t.ctx.models, []);
  // The policy names the turn model; this app's policy names the scripted one.
  t.ctx.config.policy.settings.model.id = model.id;
});
afterAll(async () => {
  model.dispose();
  await t.close();
});

const types = (events: Ev[]) => events.map((e) => e.type).filter((ty) => ty !== "turn_status");

describe("RLM loop", () => {
  test("code → output → llm_query → SUBMIT, each step fed back to the model", async () => {
    const seen: string[] = [];
    model.registration.setResponses([
      fauxAssistantMessage([
        fauxThinking("Sum first."),
        fauxText("Let me compute.\n```python\nx = sum(range(10))\nprint(x)\n```"),
      ]),
      (context) => {
        seen.push(lastUser(context));
        return py("answer = llm_query('Say 45 in words')\nprint(answer)", "Now ask the model.");
      },
      (context) => {
        seen.push(lastUser(context));
        return fauxAssistantMessage("forty-five");
      },
      (context) => {
        seen.push(lastUser(context));
        return py("SUBMIT(answer=f'{x} is {answer}')");
      },
    ]);
    const session = await createSession(t);
    const { events } = await runTurn(t, session, { text: "What is the sum of 0..9, in words?" });
    expect(types(events.filter((e) => e.type !== "reasoning" || e.final))).toEqual([
      "turn_start",
      "step_start",
      "reasoning",
      "code",
      "output",
      "step_finish",
      "step_start",
      "reasoning",
      "code",
      "tool_call",
      "tool_result",
      "output",
      "step_finish",
      "step_start",
      "code",
      "output",
      "step_finish",
      "text",
      "usage",
      "turn_finish",
    ]);
    // Reasoning streams as deltas; the closing event of each step carries the whole text.
    const reasoning = events.filter((e) => e.type === "reasoning");
    const firstStep = reasoning.filter((e) => e.step === 1);
    expect(firstStep.at(-1)).toMatchObject({ final: true, text: "Sum first.\n\nLet me compute." });
    expect(firstStep.map((e) => e.delta).join("")).toBe("Sum first.\n\nLet me compute.");
    expect(reasoning.filter((e) => e.final).map((e) => e.step)).toEqual([1, 2]);
    expect(events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output)).toEqual([
      "45\n",
      "forty-five\n",
      "",
    ]);
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({
      toolName: "llm_query",
      input: ["Say 45 in words"],
    });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({
      toolName: "llm_query",
      output: "forty-five",
      error: null,
    });
    expect(events.find((e) => e.type === "text")?.text).toBe("45 is forty-five");
    expect(events.find((e) => e.type === "usage")?.usage.llmCalls).toBe(4);
    expect(seen[0]).toBe("Output of step 1:\n45\n");
    expect(seen[1]).toBe("Say 45 in words");
    expect(seen[2]).toBe("Output of step 2:\nforty-five\n");
  });

  test("rlm_query_batched runs children in parallel (at most two at once), depth 1, with child_progress", async () => {
    const child = async (context: Context) => {
      const prompt = lastUser(context);
      return py(
        `try:\n    rlm_query('deeper')\n    depth = 'nested'\nexcept NameError:\n    depth = 'depth 1'\nSUBMIT(answer='${prompt.toUpperCase()} ' + depth)`,
      );
    };
    model.registration.setResponses([
      py("results = rlm_query_batched(['task a', 'task b', 'task c'])\nprint(results)"),
      child,
      child,
      child,
      py("SUBMIT(answer=' | '.join(results))"),
    ]);
    const session = await createSession(t);
    const { events } = await runTurn(t, session, { text: "Split the work" });
    const progress = events.filter((e) => e.type === "child_progress");
    const running = new Set<string>();
    let most = 0;
    for (const p of progress) {
      if (p.state === "running") running.add(p.childId);
      if (["completed", "failed", "cancelled", "timed_out"].includes(p.state)) running.delete(p.childId);
      most = Math.max(most, running.size);
    }
    expect(most).toBe(2);
    const finals = progress.filter((p) => p.state === "completed");
    expect(finals).toHaveLength(3);
    for (const f of finals) {
      expect(f.cleanupState).toBe("done");
      expect(f.parentRunId).toBe(events.find((e) => e.type === "turn_start")?.runId);
      expect(f.codeExcerpt).toContain("SUBMIT");
    }
    expect(events.find((e) => e.type === "text")?.text).toBe(
      "TASK A depth 1 | TASK B depth 1 | TASK C depth 1",
    );
    expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
  });
});

describe("AI SDK client", () => {
  test("a scripted turn with reasoning and a tool call reads as one UI message", async () => {
    model.registration.setResponses([
      fauxAssistantMessage([
        fauxThinking("Plan."),
        fauxText("Asking.\n```python\nSUBMIT(answer=llm_query('hi'))\n```"),
      ]),
      fauxAssistantMessage("hello there"),
    ]);
    const session = await createSession(t);
    const response = await t.request(
      `/api/sessions/${session}/turns?format=ui-message-stream`,
      turnRequest({ text: "greet" }),
    );
    const chunks = parseJsonEventStream({
      stream: response.body as ReadableStream<Uint8Array>,
      schema: uiMessageChunkSchema,
    }).pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (!result.success) throw result.error;
          controller.enqueue(result.value);
        },
      }),
    );
    let last: { parts: { type: string; text?: string; state?: string; output?: unknown }[] } | undefined;
    for await (const message of readUIMessageStream({ stream: chunks, terminateOnError: true }))
      last = message;
    const parts = last?.parts ?? [];
    expect(parts.find((p) => p.type === "reasoning")?.text).toBe("Plan.\n\nAsking.");
    expect(parts.find((p) => p.type === "dynamic-tool")).toMatchObject({
      state: "output-available",
      output: "hello there",
    });
    expect(parts.find((p) => p.type === "text")?.text).toBe("hello there");
  });
});

describe("caps", () => {
  test("the step and model-call caps end the turn with a warning and finishReason length", async () => {
    const capped = await turnsApp({
      edits: [
        ["max_iters = 12", "max_iters = 2"],
        ["max_llm_calls = 32", "max_llm_calls = 3"],
      ],
    });
    const scripted = scriptedModel(capped.ctx.models, [
      py(
        "for i in range(3):\n    try:\n        llm_query('q')\n        print('ok')\n    except RuntimeError as e:\n        print('refused:', e)",
      ),
      fauxAssistantMessage("ok"),
      fauxAssistantMessage("ok"),
      py("print('step two')"),
    ]);
    capped.ctx.config.policy.settings.model.id = scripted.id;
    try {
      const session = await createSession(capped);
      const { events } = await runTurn(capped, session, { text: "loop" });
      const outputs = events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output);
      expect(outputs[0]).toBe("ok\nok\nrefused: the model-call limit of 3 is reached\n");
      expect(events.filter((e) => e.type === "step_start")).toHaveLength(1);
      expect(events.find((e) => e.type === "warning")).toMatchObject({ code: "llm_call_limit" });
      expect(events.at(-1)).toMatchObject({ type: "turn_finish", finishReason: "length" });
    } finally {
      scripted.dispose();
      await capped.close();
    }
  });
});
