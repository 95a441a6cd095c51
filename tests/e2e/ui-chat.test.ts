/**
 * The chat UI in Chromium against a real server with scripted models: streaming, thinking and tools,
 * plan → execute, a question answered inline, abort, switching sessions, attaching a file, export, and
 * axe-core on the page.
 */
import { afterAll, expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { fauxAssistantMessage, fauxText, fauxThinking, fauxToolCall } from "@mariozechner/pi-ai";
import type { Browser, Page } from "playwright";
import type { TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import type { ScriptedModel } from "../helpers/faux.ts";
import {
  axeCheck,
  type LiveUi,
  liveUi,
  openChat as openChatWith,
  pageTest,
  sendMessage,
  uiSuite,
} from "../helpers/ui.ts";

const toolUse = { stopReason: "toolUse" as const };

uiSuite("chat UI", () => {
  let t: TestApp;
  let server: LiveUi["server"];
  let browser: Browser;
  const models: ScriptedModel[] = [];
  liveUi((live) => {
    ({ t, server, browser } = live);
  });
  afterAll(async () => {
    for (const m of models) m.dispose();
  });

  const model = (...args: Parameters<typeof scripted>[1][]) => {
    const m = scripted(t, args[0] ?? [], { tokensPerSecond: 200 });
    models.push(m);
    return m;
  };

  const openChat = (page: Page, m: ScriptedModel) => openChatWith(page, server.url, m.id);
  const send = sendMessage;

  const lastAssistant = (page: Page) => page.locator("article.msg-assistant").last();

  pageTest(
    "a message streams in as Markdown, with its thinking and a tool call and result",
    () => browser,
    async (page) => {
      const m = model([
        fauxAssistantMessage(
          [fauxThinking("Let me look at the folder."), fauxToolCall("ls", { path: "." }, { id: "ls1" })],
          toolUse,
        ),
        fauxAssistantMessage([
          fauxText(
            `Here is **the answer** with code:\n\n\`\`\`js\nconst x = 1;\n\`\`\`\n\n${"More words. ".repeat(40)}`,
          ),
        ]),
      ]);
      await openChat(page, m);
      await send(page, "What is here?");
      // While it streams the Stop button shows and the text grows.
      await page.waitForSelector("button:has-text('Stop')");
      await page.waitForSelector("article.msg-assistant .markdown strong");
      await page.waitForSelector("button:has-text('Stop')", { state: "detached" });
      const answer = lastAssistant(page);
      expect(await answer.locator(".markdown strong").textContent()).toBe("the answer");
      expect(await answer.locator(".markdown pre code").textContent()).toContain("const x = 1;");
      expect(await answer.locator(".markdown pre code.language-js .hljs-keyword").first().textContent()).toBe(
        "const",
      );
      expect(await answer.locator("details.thinking summary").textContent()).toBe("Thought");
      expect(await answer.locator("details.thinking .thinking-text").textContent()).toContain(
        "Let me look at the folder.",
      );
      const tool = answer.locator('details.tool[data-tool="ls"]');
      expect(await tool.getAttribute("data-state")).toBe("output-available");
      await tool.locator("summary").click();
      expect(await tool.locator(".tool-output").isVisible()).toBe(true);
      // The user's message and the new session in the sidebar.
      expect(await page.locator("article.msg-user .bubble").textContent()).toBe("What is here?");
      await page.waitForSelector(".sessions li[aria-current='true']");
      expect(await axeCheck(page)).toEqual([]);
    },
  );

  pageTest(
    "hostile Markdown from the model is shown inert: no script, handler or javascript: link survives",
    () => browser,
    async (page) => {
      const m = model([
        fauxAssistantMessage(
          'Look <img src="x" onerror="window.pwned=1"> <script>window.pwned=2</script> [click](javascript:window.pwned=3) <a href="https://example.org" onclick="window.pwned=4">site</a> <form action="/api/chat"><button>go</button></form> end.',
        ),
      ]);
      await openChat(page, m);
      await send(page, "be hostile");
      await page.waitForSelector("article.msg-assistant .markdown >> text=end.");
      const html = await lastAssistant(page).locator(".markdown").innerHTML();
      expect(html).not.toMatch(/onerror|onclick|<script|javascript:|<form|<button/i);
      expect(await lastAssistant(page).locator("a[href='https://example.org']").getAttribute("rel")).toBe(
        "noopener noreferrer",
      );
      expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    },
  );

  pageTest(
    "plan mode shows the todos; Execute runs them to completion",
    () => browser,
    async (page) => {
      const m = model([
        fauxAssistantMessage("I looked around.\n\nPlan:\n1. Create the notes file\n2. Review it"),
      ]);
      await openChat(page, m);
      await page.selectOption("section.main-pane .toolbar select >> nth=-1", "plan");
      await send(page, "Plan the notes");
      await page.waitForSelector("section.plan button:has-text('Execute')");
      expect(await page.locator("section.plan .todos li").allTextContents()).toEqual([
        "☐ 1. Create the notes file",
        "☐ 2. Review it",
      ]);
      m.append([
        fauxAssistantMessage(
          [
            fauxText("Creating it. [DONE:1]"),
            fauxToolCall("write", { path: "notes.md", content: "# Notes\n" }, { id: "w1" }),
          ],
          toolUse,
        ),
        fauxAssistantMessage("Reviewed [DONE:2]. All done."),
      ]);
      await page.click("section.plan button:has-text('Execute')");
      await page.waitForFunction(() => document.querySelector("section.plan .badge")?.textContent === "2/2");
      await page.waitForSelector("button:has-text('Stop')", { state: "detached" });
      expect(await page.locator("section.plan .todos li[data-done='true']").count()).toBe(2);
      expect(existsSync(`${t.dataDir}/workspaces/local/notes.md`)).toBe(true);
      expect(await axeCheck(page)).toEqual([]);
    },
  );

  pageTest(
    "a question is answered inline and the turn goes on",
    () => browser,
    async (page) => {
      const options = [
        { id: "red", label: "Red" },
        { id: "blue", label: "Blue" },
      ];
      const m = model([
        fauxAssistantMessage(
          [
            fauxToolCall(
              "questionnaire",
              { id: "colour", question: "Which colour?", kind: "single", options },
              { id: "q1" },
            ),
          ],
          toolUse,
        ),
        fauxAssistantMessage("Painting it red."),
      ]);
      await openChat(page, m);
      await send(page, "paint");
      await page.waitForSelector("section.question >> text=Which colour?");
      expect(await axeCheck(page)).toEqual([]);
      await page.click("section.question button:has-text('Red')");
      await page.waitForSelector("article.msg-assistant >> text=Painting it red.");
      await page.waitForSelector("section.question", { state: "detached" });
    },
  );

  pageTest(
    "Esc aborts a running reply; the partial answer stays",
    () => browser,
    async (page) => {
      const m = scripted(t, [fauxAssistantMessage("word ".repeat(2000))], { tokensPerSecond: 20 });
      models.push(m);
      await openChat(page, m);
      await send(page, "talk a lot");
      await page.waitForFunction(
        () => (document.querySelector("article.msg-assistant .markdown")?.textContent ?? "").length > 5,
      );
      await page.press("#composer-input", "Escape");
      await page.waitForSelector("button:has-text('Stop')", { state: "detached", timeout: 10_000 });
      const text = (await lastAssistant(page).locator(".markdown").textContent()) ?? "";
      expect(text.length).toBeGreaterThan(0);
      expect(text.length).toBeLessThan("word ".repeat(2000).length);
    },
  );

  pageTest(
    "switching sessions shows each one's transcript; Shift+Enter is a newline",
    () => browser,
    async (page) => {
      const m = model([fauxAssistantMessage("First reply."), fauxAssistantMessage("Second reply.")]);
      await openChat(page, m);
      await send(page, "first topic");
      await page.waitForSelector("text=First reply.");
      await page.click("button:has-text('New chat')");
      await page.waitForSelector("article.msg", { state: "detached" });
      await page.fill("#composer-input", "second");
      await page.press("#composer-input", "Shift+Enter");
      await page.type("#composer-input", "topic");
      expect(await page.inputValue("#composer-input")).toBe("second\ntopic");
      await page.press("#composer-input", "Enter");
      await page.waitForSelector("text=Second reply.");
      await page.click(".sessions .session-open:has-text('first topic')");
      await page.waitForSelector("text=First reply.");
      expect(await page.locator("text=Second reply.").count()).toBe(0);
      expect(await page.locator("article.msg-user .bubble").textContent()).toBe("first topic");
    },
  );

  pageTest(
    "a reply still running when its session is left streams on; coming back shows it live and Stop works",
    () => browser,
    async (page) => {
      const quick = model([fauxAssistantMessage("Quick reply.")]);
      const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
      const slow = scripted(t, [fauxAssistantMessage(words)], { tokensPerSecond: 40 });
      models.push(slow);
      await openChat(page, quick);
      await send(page, "first topic");
      await page.waitForSelector("text=Quick reply.");
      await page.click("button:has-text('New chat')");
      await page.waitForSelector("article.msg", { state: "detached" });
      await page.selectOption("section.main-pane .toolbar select >> nth=0", slow.id);
      await send(page, "a long story");
      const reply = page.locator("article.msg-assistant .markdown").last();
      await page.waitForFunction(() =>
        (document.querySelector("article.msg-assistant .markdown")?.textContent ?? "").includes("word3"),
      );
      // The new chat is listed while it replies; leave it for the first one.
      await page.click(".sessions .session-open:has-text('first topic')");
      await page.waitForSelector("text=Quick reply.");
      expect(await page.locator("text=word1").count()).toBe(0);
      expect(await page.locator("button:has-text('Stop')").count()).toBe(0);
      await page.waitForSelector(".sessions .session-open:has-text('a long story') .replying");
      // Come back: the reply so far, and the rest streaming in.
      await page.click(".sessions .session-open:has-text('a long story')");
      await page.waitForSelector("article.msg-user .bubble:has-text('a long story')");
      const back = ((await reply.textContent()) ?? "").length;
      expect(back).toBeGreaterThan("word0 word1 word2 word3".length);
      await page.waitForFunction(
        (n) => (document.querySelector("article.msg-assistant .markdown")?.textContent ?? "").length > n + 20,
        back,
      );
      expect(await page.locator(".sessions .replying").count()).toBe(0);
      await page.click("button:has-text('Stop')");
      await page.waitForSelector("button:has-text('Stop')", { state: "detached" });
      const kept = (await reply.textContent()) ?? "";
      expect(kept).toContain("word3");
      expect(kept).not.toContain("word399");
      // The server ended the run aborted: reopening the session shows the partial answer, not the whole.
      await page.click(".sessions .session-open:has-text('first topic')");
      await page.waitForSelector("text=Quick reply.");
      await page.click(".sessions .session-open:has-text('a long story')");
      await page.waitForSelector("article.msg-user .bubble:has-text('a long story')");
      expect((await reply.textContent()) ?? "").not.toContain("word399");
      expect(await axeCheck(page)).toEqual([]);
    },
    60_000,
  );

  pageTest(
    "an attached file is written to the workspace and named; the chat exports as Markdown and JSON",
    () => browser,
    async (page) => {
      const m = model([fauxAssistantMessage("Got the file.")]);
      await openChat(page, m);
      await page.setInputFiles(".composer input[type=file]", {
        name: "notes.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("dropped text"),
      });
      await page.waitForSelector("text=Attached: files/uploads/notes.txt");
      await send(page, "read it");
      await page.waitForSelector("text=Got the file.");
      expect(readFileSync(`${t.dataDir}/workspaces/local/files/uploads/notes.txt`, "utf8")).toBe(
        "dropped text",
      );
      expect(await page.locator("article.msg-user .bubble").textContent()).toContain(
        "files/uploads/notes.txt",
      );

      const [md] = await Promise.all([
        page.waitForEvent("download"),
        page.click("button:has-text('Export Markdown')"),
      ]);
      const markdown = readFileSync((await md.path()) as string, "utf8");
      expect(markdown).toContain("## You");
      expect(markdown).toContain("read it");
      expect(markdown).toContain("Got the file.");
      const [js] = await Promise.all([
        page.waitForEvent("download"),
        page.click("button:has-text('Export JSON')"),
      ]);
      const exported = JSON.parse(readFileSync((await js.path()) as string, "utf8"));
      expect(exported.messages.map((x: { role: string }) => x.role)).toEqual(["user", "assistant"]);
      expect(exported.sessionId).toBeString();
    },
  );

  pageTest(
    "the thinking menu lists the catalog's levels for the picked model; max reaches the model",
    () => browser,
    async (page) => {
      let asked: unknown;
      const deep = scripted(
        t,
        [
          (_context, options) => {
            asked = (options as { reasoning?: string } | undefined)?.reasoning;
            return fauxAssistantMessage("thought hard");
          },
        ],
        { reasoning: true, thinkingLevelMap: { xhigh: "max" } },
      );
      const plain = scripted(t, [], { reasoning: true });
      const flat = scripted(t, []);
      models.push(deep, plain, flat);
      const menu = page.locator("section.main-pane .toolbar label:has-text('Thinking') select");
      const labels = () => menu.locator("option").allTextContents();
      await openChat(page, deep);
      expect(await labels()).toEqual(["off", "minimal", "low", "medium", "high", "max"]);
      await page.selectOption("section.main-pane .toolbar select >> nth=0", plain.id);
      expect(await labels()).toEqual(["off", "minimal", "low", "medium", "high"]);
      await page.selectOption("section.main-pane .toolbar select >> nth=0", flat.id);
      await menu.waitFor({ state: "detached" });
      await page.selectOption("section.main-pane .toolbar select >> nth=0", deep.id);
      await menu.selectOption({ label: "max" });
      await send(page, "think as hard as you can");
      await lastAssistant(page).locator("text=thought hard").waitFor();
      expect(asked).toBe("xhigh");
      expect(await axeCheck(page)).toEqual([]);
    },
  );
});
