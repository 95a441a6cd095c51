/**
 * `atrium chat -m TEXT` for scripts: one message (in a new session unless `--session`), the reply's
 * text printed, or with `--json` every NDJSON event as it came; exit 0, or 1 with `code: message`.
 * A question the model asks is printed on stderr and answered by the next line of stdin (EOF skips
 * it). Ctrl-C (SIGINT) aborts the reply; a second one leaves at once.
 */
import { createInterface } from "node:readline";
import type { ChatRequest, ChatQuestion as Question } from "../../schemas/chat.ts";
import { type Api, ApiError } from "../api.ts";
import { clean, cleanDeep } from "../style.ts";
import { chatClient, parseAnswer } from "./client.ts";
import { questionText } from "./view.ts";

export interface ChatOneShotOptions {
  request: ChatRequest;
  json: boolean;
}

/** Lines of stdin, one per question asked; undefined at EOF. */
function stdinLines(): { next(): Promise<string | undefined>; close(): void } {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const queued: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let ended = false;
  rl.on("line", (line) => {
    const wake = waiting.shift();
    if (wake) wake(line);
    else queued.push(line);
  });
  rl.on("close", () => {
    ended = true;
    for (const wake of waiting.splice(0)) wake(undefined);
  });
  return {
    next: () =>
      queued.length
        ? Promise.resolve(queued.shift())
        : ended
          ? Promise.resolve(undefined)
          : new Promise((r) => waiting.push(r)),
    close: () => rl.close(),
  };
}

export async function chatOneShot(api: Api, { request, json }: ChatOneShotOptions): Promise<number> {
  const client = chatClient(api);
  let input: ReturnType<typeof stdinLines> | undefined;
  let sessionId = request.sessionId;
  let reply = "";
  let failure: ApiError | undefined;
  const answers: Promise<unknown>[] = [];
  const stop = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1 || !sessionId) stop.abort();
    else void client.abort(sessionId).catch(() => stop.abort());
  };

  const ask = async (question: Question) => {
    process.stderr.write(`${questionText(cleanDeep(question))}\n`);
    input ??= stdinLines();
    for (;;) {
      const line = await input.next();
      const answer = line === undefined ? { kind: "skip" as const } : parseAnswer(question, line);
      if (answer) return client.answer(sessionId as string, question, answer);
      process.stderr.write(`not one of the options: ${line}\n`);
    }
  };

  process.on("SIGINT", onSigint);
  try {
    await client.send(
      request,
      (event) => {
        if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
        if (event.type === "start") {
          sessionId = event.sessionId;
          if (!request.sessionId && !json)
            process.stderr.write(`session ${sessionId} (continue it with --session ${sessionId})\n`);
        }
        if (event.type === "delta") reply += event.text;
        if (event.type === "tool" && event.part.awaitingAnswer && event.part.question)
          answers.push(ask(event.part.question));
        if (event.type === "done") {
          const parts = Array.isArray(event.message?.parts) ? event.message.parts : [];
          const texts = parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text);
          if (texts.length) reply = texts.join("\n\n");
        }
        if (event.type === "error") failure ??= new ApiError("chat_failed", event.message);
      },
      stop.signal,
    );
    await Promise.all(answers);
  } finally {
    process.off("SIGINT", onSigint);
    input?.close();
  }
  if (stop.signal.aborted) failure ??= new ApiError("interrupted", "stopped following the reply");
  if (failure) throw failure;
  // On a terminal the reply is cleaned of escapes (style.ts); a pipe gets it as the model wrote it.
  if (!json) process.stdout.write(`${process.stdout.isTTY ? clean(reply) : reply}\n`);
  return 0;
}
