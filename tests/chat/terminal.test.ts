/**
 * `atrium chat` against a live server on a real port, with scripted models: one-shot (the reply, NDJSON,
 * a question answered from stdin, failures with code and message), and the interactive client in tmux
 * (thinking collapsed, a question answered at the prompt, plan todos after /mode plan, /model).
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { fauxAssistantMessage, fauxText, fauxThinking, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { runCli, Tmux } from "../helpers/terminal.ts";

// Each test starts the client as its own process (and a terminal): seconds on a loaded machine.
setDefaultTimeout(60_000);

const toolUse = { stopReason: "toolUse" as const };
const colours = [
  { id: "red", label: "Red" },
  { id: "blue", label: "Blue" },
];

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
const terminals: Tmux[] = [];
/** The session of the first one-shot test (two exchanges, one with thinking), resumed in a terminal. */
let twoExchanges: string;

beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
});

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close();
});

afterAll(async () => {
  await server.stop();
  await t.close();
});

const chat = (args: string[], stdin?: string) => runCli(["chat", "--url", server.url, ...args], { stdin });

async function hydrated(sessionId: string) {
  const response = await fetch(`${server.url}/api/chat/session?sessionId=${sessionId}`);
  return (await response.json()) as { messages: { role: string; parts: Record<string, unknown>[] }[] };
}

describe("atrium chat -m (one-shot)", () => {
  test("prints the reply and exits 0; --json prints every event, start first and done last", async () => {
    const model = scripted(t, [fauxAssistantMessage("Hello from the scripted model.")]);
    const run = await chat(["--model", model.id, "-m", "hello"]);
    expect(run).toMatchObject({ code: 0, stdout: "Hello from the scripted model.\n" });
    expect(run.stderr).toMatch(/^session \S+ \(continue it with --session \S+\)\n$/);

    model.append([fauxAssistantMessage([fauxThinking("consider it"), fauxText("Second reply.")])]);
    const sessionId = run.stderr.match(/^session (\S+)/)?.[1] as string;
    const json = await chat(["--model", model.id, "--session", sessionId, "--json", "-m", "again"]);
    expect(json.code).toBe(0);
    const events = json.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ type: "start", sessionId });
    expect(events.at(-1)).toMatchObject({ type: "done", sessionId });
    expect(
      events
        .filter((e) => e.type === "delta")
        .map((e) => e.text)
        .join(""),
    ).toBe("Second reply.");
    expect((await hydrated(sessionId)).messages).toHaveLength(4);
    twoExchanges = sessionId;
    model.dispose();
  });

  test("a question the model asks is answered by a line of stdin", async () => {
    const model = scripted(t, [
      fauxAssistantMessage(
        [
          fauxToolCall(
            "questionnaire",
            { id: "colour", question: "Which colour?", kind: "single", options: colours },
            { id: "q1" },
          ),
        ],
        toolUse,
      ),
      fauxAssistantMessage("Painting it."),
    ]);
    const run = await chat(["--model", model.id, "-m", "paint"], "2\n");
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("? Which colour?\n  1. Red\n  2. Blue\n");
    expect(run.stdout).toBe("Painting it.\n");
    // The answer the server recorded is the second option.
    const sessionId = run.stderr.match(/^session (\S+)/)?.[1] as string;
    const parts = (await hydrated(sessionId)).messages.flatMap((m) => m.parts);
    const question = parts.find((p) => p.type === "tool-Question");
    expect(JSON.stringify(question?.output)).toContain("Blue");
    model.dispose();
  });

  test("failures exit non-zero with a code and message; a bad flag exits 2", async () => {
    const invalid = await chat(["--session", "x".repeat(201), "-m", "hi"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^atrium chat: invalid_request: .+\n$/);
    const mode = await chat(["--mode", "chaos", "-m", "hi"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain("--mode is agent, plan or harness");
    const url = await runCli(["chat", "--url", "ftp://example.com", "-m", "hi"]);
    expect(url).toEqual({
      code: 1,
      stdout: "",
      stderr: "atrium chat: invalid_url: not an http(s) URL: ftp://example.com\n",
    });
  });
});

describe("where the token goes", () => {
  test("a redirect is not followed: the bearer token never reaches another server", async () => {
    const seen: (string | null)[] = [];
    const elsewhere = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request) {
        seen.push(request.headers.get("authorization"));
        return new Response("{}");
      },
    });
    const redirecting = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.redirect(`http://127.0.0.1:${elsewhere.port}/api/chat`, 307),
    });
    try {
      const run = await runCli(["chat", "--url", `http://127.0.0.1:${redirecting.port}`, "-m", "hi"], {
        env: { APP_TOKEN: "secret.token" },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `redirected: http://127.0.0.1:${redirecting.port} redirects to http://127.0.0.1:${elsewhere.port}/api/chat`,
      );
      expect(seen).toEqual([]);
    } finally {
      redirecting.stop(true);
      elsewhere.stop(true);
    }
  });
});

describe("atrium chat (interactive, in tmux)", () => {
  test("thinking collapsed, a question answered at the prompt, plan todos and /execute, /model", async () => {
    const model = scripted(
      t,
      [
        fauxAssistantMessage(
          [
            fauxThinking("the user wants a colour picked"),
            fauxToolCall(
              "questionnaire",
              { id: "colour", question: "Which colour?", kind: "single", options: colours },
              { id: "q1" },
            ),
          ],
          toolUse,
        ),
        fauxAssistantMessage("Painting it red."),
        fauxAssistantMessage("Looked.\n\nPlan:\n1. Mix the paint\n2. Paint the wall"),
        fauxAssistantMessage("Mixed [DONE:1]. Painted [DONE:2]. All done."),
      ],
      { reasoning: true },
    );
    const tmux = new Tmux().start(["chat", "--url", server.url, "--model", model.id]);
    terminals.push(tmux);
    await tmux.waitFor(`new session · agent · ${model.id}`);
    tmux.type("paint the wall");
    tmux.keys("Enter");
    let screen = await tmux.waitFor("? Which colour?");
    expect(screen).toContain("  1. Red\n");
    expect(screen).toContain("answer the question (/skip skips)");
    tmux.type("red");
    tmux.keys("Enter");
    screen = await tmux.waitFor("Painting it red.");
    expect(screen).toMatch(/▸ thinking · 6 words: the user wants a colour picked/);
    expect(screen).toContain("→ Question");

    tmux.type("/mode plan");
    tmux.keys("Enter");
    await tmux.waitFor(`· plan · ${model.id}`);
    tmux.type("plan the painting");
    tmux.keys("Enter");
    screen = await tmux.waitFor("[ ] 2. Paint the wall");
    expect(screen).toContain("plan 0/2");
    expect(screen).toContain("[ ] 1. Mix the paint");
    expect(screen).toContain("/execute runs it");
    tmux.type("/execute");
    tmux.keys("Enter");
    screen = await tmux.waitFor("[x] 2. Paint the wall");
    expect(screen).toContain("plan 2/2");
    expect(screen).toContain("[x] 1. Mix the paint");
    // Executing left plan mode.
    await tmux.waitFor(`· agent · ${model.id}`);

    tmux.type("/model");
    tmux.keys("Enter");
    await tmux.waitFor(`* ${model.id}`);
    model.dispose();
  });

  test("--session resumes a session: its messages drawn as they streamed; Ctrl-C twice exits", async () => {
    const tmux = new Tmux().start(["chat", "--url", server.url, "--session", twoExchanges]);
    terminals.push(tmux);
    const screen = await tmux.waitFor("Second reply.");
    expect(screen).toContain(`resumed session ${twoExchanges}`);
    expect(screen).toMatch(/you › hello\n Hello from the scripted model\.\n/);
    expect(screen).toMatch(/you › again\n ▸ thinking · 2 words: consider it\n Second reply\./);
    tmux.keys("C-c");
    await tmux.waitFor("press Ctrl-C again to exit");
    tmux.keys("C-c");
    await tmux.waitFor("[exited 0]");
  });
});
