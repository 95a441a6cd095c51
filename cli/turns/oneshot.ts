/**
 * `atrium turns -m TEXT` for scripts: runs one turn (in a new session unless `--session`), prints the
 * answer, or with `--json` every spec event as one JSON line, and exits 0; a turn that fails or is
 * cancelled exits 1 with `code: message` on stderr. Ctrl-C (SIGINT) cancels the running turn through
 * the cancellation route; a second one leaves without waiting.
 */

import type { TurnStreamEvent as TurnEvent } from "../../schemas/turn-stream.ts";
import type { Api } from "../api.ts";
import { ApiError } from "../api.ts";
import { clean } from "../style.ts";
import { titleOf, turnsClient } from "./client.ts";
import { runTurn } from "./stream.ts";

export interface OneShotOptions {
  message: string;
  sessionId?: string;
  json: boolean;
  attach: string[];
}

export async function oneShot(api: Api, options: OneShotOptions): Promise<number> {
  const client = turnsClient(api);
  let sessionId = options.sessionId;
  if (!sessionId) {
    sessionId = (await client.createSession(titleOf(options.message))).id;
    if (!options.json)
      process.stderr.write(`session ${sessionId} (continue it with --session ${sessionId})\n`);
  }
  const attachmentIds: string[] = [];
  for (const path of options.attach) attachmentIds.push((await client.attach(path)).id);

  const texts = new Map<string, string>();
  let failure: ApiError | undefined;
  let runId: string | undefined;
  let interrupts = 0;
  const stop = new AbortController();
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1 || !runId) stop.abort();
    else void client.cancel(runId).catch(() => stop.abort());
  };
  process.on("SIGINT", onSigint);
  try {
    await runTurn({
      api,
      sessionId,
      input: attachmentIds.length
        ? { text: options.message, attachment_ids: attachmentIds }
        : { text: options.message },
      signal: stop.signal,
      onReconnect: (attempt, why) => process.stderr.write(`reconnecting (${attempt}): ${why}\n`),
      onEvent(event: TurnEvent) {
        if (options.json) process.stdout.write(`${JSON.stringify(event)}\n`);
        if (event.type === "turn_start") runId = event.runId;
        if (event.type === "text") texts.set(event.streamId, event.text);
        if (event.type === "turn_error") failure ??= new ApiError(event.code, event.message);
        if (event.type === "turn_cancelled") failure ??= new ApiError("turn_cancelled", "Turn cancelled");
      },
    });
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (stop.signal.aborted) failure ??= new ApiError("interrupted", "stopped following the turn");
  if (failure) throw failure;
  const answer = [...texts.values()].join("\n\n");
  // On a terminal the answer is cleaned of escapes (style.ts); a pipe gets it as the model wrote it.
  if (!options.json) process.stdout.write(`${process.stdout.isTTY ? clean(answer) : answer}\n`);
  return 0;
}
