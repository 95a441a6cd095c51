/** A search stream stops its work when the client goes away: the model's request is aborted. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scriptedModel } from "../helpers/faux.ts";
import { listen } from "../helpers/listen.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  const text = "Ada Lovelace met Charles Babbage in London. Ada Lovelace wrote to Charles Babbage often.";
  await t.json("/search/index", postJson({ documents: [{ name: "ada.txt", text }] }));
});
afterAll(() => t.close());

test("disconnecting from a local stream aborts the model's request", async () => {
  let signal: AbortSignal | undefined;
  const model = scriptedModel(
    t.ctx.models,
    [
      (_context, options) => {
        signal = options?.signal;
        return fauxAssistantMessage("word ".repeat(400));
      },
    ],
    { tokensPerSecond: 50 },
  );
  const server = listen(t);
  try {
    const client = new AbortController();
    const response = await fetch(`${server.url}/search/local/stream`, {
      ...postJson({ query: "Who is Ada Lovelace?", model: model.id }),
      signal: client.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: delta")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    expect(seen).toStartWith("event: context");
    expect(signal?.aborted).toBe(false);
    client.abort();
    await reader.cancel().catch(() => {});
    await waitFor(() => signal?.aborted, { what: "the model call to be aborted" });
  } finally {
    await server.stop();
    model.dispose();
  }
});
