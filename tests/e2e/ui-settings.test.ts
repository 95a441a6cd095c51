/**
 * First run, settings and providers in Chromium: with no model configured the setup card offers the
 * providers panel and a local Ollama's models (a stub Ollama on a real port), the offline model answers;
 * a chat setting is changed; a provider key is set (and never shown back) and cleared; Bedrock's three
 * fields are filled and it shows configured; axe-core passes.
 */
import { afterAll, expect } from "bun:test";
import type { Browser } from "playwright";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";

uiSuite("first run, settings and providers UI", () => {
  let t: TestApp;
  let server: LiveUi["server"];
  let browser: Browser;
  // A local server speaking Ollama's /api/tags: nothing pulled at first, then two models.
  let pulled: { name: string }[] = [];
  const ollama = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) =>
      new URL(request.url).pathname === "/api/tags"
        ? Response.json({ models: pulled })
        : new Response("no", { status: 404 }),
  });

  // An Ollama behind a proxy that wants a token: refuses with its own words.
  const guarded = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ error: "proxy says: token invalid or expired" }, { status: 401 }),
  });
  const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const closedPort = closed.port;
  closed.stop(true);

  liveUi(
    (live) => {
      ({ t, server, browser } = live);
    },
    () => createTestApp({ env: { OLLAMA_BASE_URL: `http://127.0.0.1:${ollama.port}` } }),
  );
  afterAll(async () => {
    ollama.stop(true);
    guarded.stop(true);
  });

  pageTest(
    "first run: the setup card; the offline model answers; a discovered Ollama model is picked",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/`);
      await page.waitForSelector("section.setup >> text=Set up a model");
      expect(await axeCheck(page)).toEqual([]);
      // The offline model still answers, and points at what the UI offers.
      await page.fill("#composer-input", "hello");
      await page.press("#composer-input", "Enter");
      await page.waitForSelector("article.msg-assistant .markdown");
      await page.waitForSelector("button:has-text('Stop')", { state: "detached" });
      // Its reply names what this page offers: the providers panel, the setup card and the Model menu.
      const reply = (await page.locator("article.msg-assistant .markdown").textContent()) ?? "";
      expect(reply).toContain("Settings → Providers");
      expect(await page.locator("section.setup a:has-text('Settings → Providers')").count()).toBe(1);
      expect(reply).toContain("Set up a model");
      expect(await page.locator("section.setup h2").textContent()).toBe("Set up a model");
      expect(reply).toContain("Model menu");
      expect(await page.locator(".toolbar label:has-text('Model') select").count()).toBe(1);

      // Looking for models is the card's test of Ollama: it answered, with nothing pulled yet.
      await page.click("button:has-text('Find local Ollama models')");
      await page.waitForSelector("section.setup >> text=Ollama answered but serves no model.");

      // The user pulls models in Ollama, then asks the card for them.
      pulled = [{ name: "llama3.2:latest" }, { name: "qwen3:4b" }];
      await page.click("button:has-text('Find local Ollama models')");
      await page.waitForSelector("ul.discovered >> text=qwen3:4b");
      await page.click("button:has-text('Use qwen3:4b')");
      await page.waitForFunction(() => {
        const select = document.querySelector<HTMLSelectElement>(".toolbar select");
        return select?.value === "ollama/qwen3:4b";
      });
      const settings = await t.json<Record<string, unknown> & { effective?: Record<string, unknown> }>(
        "/api/chat/settings",
      );
      const effective = settings.body.effective ?? settings.body;
      expect(effective).toMatchObject({ defaultProvider: "ollama", defaultModel: "qwen3:4b" });
    },
  );

  pageTest(
    "a chat setting changes and the update's impact is explained",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      await page.waitForSelector("#set-thinking");
      await page.selectOption("#set-thinking", "high");
      await page.waitForSelector("[role=status] >> text=Saved.");
      const settings = await t.json<Record<string, unknown> & { effective?: Record<string, unknown> }>(
        "/api/chat/settings",
      );
      expect((settings.body.effective ?? settings.body).defaultThinkingLevel).toBe("high");
      await page.uncheck("text=Compact long conversations automatically");
      await page.waitForFunction(() =>
        document
          .querySelector("[aria-labelledby=chat-settings-title] [role=status]")
          ?.textContent?.includes("Saved."),
      );
      const after = await t.json<
        Record<string, unknown> & { effective?: { compaction?: { enabled: boolean } } }
      >("/api/chat/settings");
      expect(
        (after.body.effective ?? (after.body as { compaction?: { enabled: boolean } })).compaction?.enabled,
      ).toBe(false);
      expect(await axeCheck(page)).toEqual([]);
    },
  );

  pageTest(
    "a provider key is set, never shown back, and cleared",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      const row = page.locator('li.provider[data-provider="groq"]');
      await row.waitFor();
      expect(await row.locator(".badge").textContent()).toBe("not set");
      await row.locator("input[type=password]").fill("gsk-secret-123");
      await row.locator("button:has-text('Save key')").click();
      await row.locator(".badge:has-text('configured')").waitFor();
      expect(await row.locator("input[type=password]").inputValue()).toBe("");
      expect(await page.content()).not.toContain("gsk-secret-123");
      const providers = await t.json<{ providers: Record<string, unknown>[] }>("/api/chat/providers");
      expect(JSON.stringify(providers.body)).not.toContain("gsk-secret-123");
      await page.reload();
      await row.locator(".badge:has-text('configured')").waitFor();
      expect(await page.content()).not.toContain("gsk-secret-123");
      await row.locator("button:has-text('Clear')").click();
      await row.locator(".badge:has-text('not set')").waitFor();
    },
  );

  pageTest(
    "Test connection: an unreachable URL and a refused key in the provider's own words",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      const row = page.locator('li.provider[data-provider="ollama"]');
      await row.waitFor();
      // Ollama is reached at an address: its field asks for a base URL, in plain text, not an API key.
      const field = row.getByLabel("Ollama base URL");
      expect(await field.getAttribute("type")).toBe("url");
      expect(await row.locator("input[type=password]").count()).toBe(0);
      expect(await row.getByText("API key").count()).toBe(0);
      expect(await page.getByLabel("Groq API key").getAttribute("type")).toBe("password");
      // The typed URL is tested before it is saved: a closed port.
      await field.fill(`http://127.0.0.1:${closedPort}`);
      await row.locator("button:has-text('Test connection')").click();
      await row
        .locator(
          `.test-result.error:has-text("Ollama is unreachable at http://127.0.0.1:${closedPort}/api/tags: connection refused")`,
        )
        .waitFor();
      // A server that refuses: its own message.
      await field.fill(`http://127.0.0.1:${guarded.port}`);
      await row.locator("button:has-text('Test connection')").click();
      await row
        .locator(
          '.test-result.error:has-text("Ollama refused the key (401): proxy says: token invalid or expired")',
        )
        .waitFor();
      // Nothing typed: the configured one (the environment's URL) answers.
      await field.fill("");
      await row.locator("button:has-text('Test connection')").click();
      await row.locator('.test-result:not(.error):has-text("Connected to Ollama")').waitFor();
      // A provider without a key says how to give one.
      const groq = page.locator('li.provider[data-provider="groq"]');
      await groq.locator("button:has-text('Test connection')").click();
      await groq
        .locator('.test-result:has-text("Groq has no key: type one above or set GROQ_API_KEY")')
        .waitFor();
      expect(await axeCheck(page)).toEqual([]);
    },
  );

  pageTest(
    "Bedrock asks for its three fields, stores them together, and shows it configured",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      const row = page.locator('li.provider[data-provider="amazon-bedrock"]');
      await row.waitFor();
      expect(await row.locator(".badge").textContent()).toBe("not set");
      const keyId = row.getByLabel("Access key ID");
      const secret = row.getByLabel("Secret access key");
      const region = row.getByLabel("Region");
      expect(await secret.getAttribute("type")).toBe("password");
      expect(await keyId.getAttribute("type")).toBe("password");
      expect(await region.getAttribute("type")).toBe("text");
      // Every field is needed: the button waits for the third.
      await keyId.fill("AKIAUITESTEXAMPLE001");
      await secret.fill("ui/Secret+Access/Key0123456789");
      expect(await row.locator("button:has-text('Save credentials')").isDisabled()).toBe(true);
      await region.fill("eu-central-1");
      await row.locator("button:has-text('Save credentials')").click();
      await row.locator(".badge:has-text('configured')").waitFor();
      expect(await secret.inputValue()).toBe("");
      expect(await page.content()).not.toContain("ui/Secret+Access/Key0123456789");
      const providers = await t.json<{ providers: { id: string; fields?: { set: boolean }[] }[] }>(
        "/api/chat/providers",
      );
      expect(JSON.stringify(providers.body)).not.toContain("ui/Secret+Access/Key0123456789");
      expect(
        providers.body.providers.find((p) => p.id === "amazon-bedrock")?.fields?.every((f) => f.set),
      ).toBe(true);
      expect(await axeCheck(page)).toEqual([]);
      await row.locator("button:has-text('Clear')").click();
      await row.locator(".badge:has-text('not set')").waitFor();
    },
  );
});
