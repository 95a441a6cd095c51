/**
 * `rlm`: the last user message runs as a turn of the turns family (`POST /api/sessions/{id}/turns`, SSE):
 * the model writes Python that runs in the user's jail, step by step. The turn's final text is the
 * message; each step's code and output stream as `reasoning_content`, so clients that show thinking
 * show the work. A turn is durable: without an idempotency key, a client that goes away cancels it
 * (`PUT /api/runs/{id}/cancellation`); with one (`Idempotency-Key` header), it completes, and the same
 * request again replays it from the turns family's own record instead of running twice (the run is found
 * by its key there, whatever else the caller has run since). `rlm/<provider/model>` names the turn's root
 * model (the turns request's `model`; the service checked it is one this server offers).
 */
import { AppError } from "../http/errors.ts";
import { type AtriumHttp, sseFrames } from "../mcp/http.ts";
import { fromFamily } from "./errors.ts";
import type { Piece, Pieces } from "./output.ts";

interface TurnEvent {
  runId?: string;
  output?: string;
  code?: string;
  text?: string;
  final?: boolean;
  step?: number;
  message?: string;
}

/**
 * The turn's own Idempotency-Key: the client's key, hashed into a namespace of its own, so it never
 * meets a key the caller used on the turns API directly and always fits the turns family's limit.
 */
function turnKey(key: string): string {
  return `openai-rlm-${new Bun.CryptoHasher("sha256").update(key).digest("hex").slice(0, 40)}`;
}

/**
 * The session a keyed turn runs in: the one its earlier run used, found by the key in the turns
 * family's own record (`GET /api/runs?idempotency_key=`), so a retry replays there; a new one otherwise.
 */
async function sessionFor(http: AtriumHttp, key: string | undefined): Promise<string> {
  if (key !== undefined) {
    const runs = await http.json<{ items: { sessionId: string }[] }>(
      "GET",
      `/api/runs?idempotency_key=${encodeURIComponent(key)}`,
    );
    const earlier = runs.items[0]?.sessionId;
    if (earlier) return earlier;
  }
  return (await http.json<{ id: string }>("POST", "/api/sessions", { title: "OpenAI rlm" })).id;
}

export async function rlmPieces(
  http: AtriumHttp,
  kind: { root?: string },
  question: string,
  idempotencyKey?: string,
): Promise<Pieces> {
  if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,200}$/.test(idempotencyKey))
    throw new AppError("invalid", "The Idempotency-Key header must be 1 to 200 visible ASCII characters", {
      issues: [{ loc: ["header", "idempotency-key"], msg: "invalid", type: "value_error" }],
    });
  const key = idempotencyKey === undefined ? undefined : turnKey(idempotencyKey);
  let session: string;
  try {
    session = await sessionFor(http, key);
  } catch (error) {
    throw fromFamily(error);
  }
  // Durable with a key: the turn outlives the request. Without one, it ends with it.
  const turnHttp = idempotencyKey !== undefined ? http.detached() : http;
  return (signal) =>
    turnPieces(
      turnHttp,
      http,
      session,
      kind.root === undefined ? { text: question } : { text: question, model: kind.root },
      key ?? crypto.randomUUID(),
      idempotencyKey === undefined ? signal : undefined,
    );
}

async function* turnPieces(
  http: AtriumHttp,
  callerHttp: AtriumHttp,
  session: string,
  body: { text: string; model?: string },
  key: string,
  cancelWith: AbortSignal | undefined,
): AsyncGenerator<Piece> {
  let response: Response;
  try {
    response = await http.send("POST", `/api/sessions/${encodeURIComponent(session)}/turns`, body, {
      "idempotency-key": key,
      accept: "text/event-stream",
    });
  } catch (error) {
    throw fromFamily(error);
  }
  let runId: string | undefined;
  let answer = "";
  let finished = false;
  try {
    for await (const frame of sseFrames(response.body as ReadableStream<Uint8Array>)) {
      const event = frame.data as TurnEvent;
      if (!frame.event || typeof event !== "object" || event === null) continue;
      if (frame.event === "turn_start") runId = event.runId;
      else if (frame.event === "code" && event.final && event.code)
        yield { type: "reasoning", text: `\n[step ${event.step ?? "?"}] code:\n${event.code}\n` };
      else if (frame.event === "output" && event.final && event.output)
        yield { type: "reasoning", text: `[step ${event.step ?? "?"}] output:\n${event.output}\n` };
      else if (frame.event === "text" && event.final) answer = event.text ?? answer;
      else if (frame.event === "turn_error")
        throw new AppError("unavailable", `The turn failed: ${event.message ?? "no answer"}`, {
          status: 502,
          code: "turn_failed",
        });
      else if (frame.event === "turn_cancelled")
        throw new AppError("conflict", "The turn was cancelled", { code: "turn_cancelled" });
      else if (frame.event === "turn_finish") finished = true;
    }
  } finally {
    // The client left before the turn ended and there is no key to come back with: stop the run.
    if (cancelWith?.aborted && runId && !finished) await cancel(callerHttp, runId);
  }
  yield { type: "text", text: answer };
  yield { type: "finish", reason: "stop" };
}

async function cancel(http: AtriumHttp, runId: string): Promise<void> {
  try {
    await http.detached().send("PUT", `/api/runs/${encodeURIComponent(runId)}/cancellation`);
  } catch {
    // already finished
  }
}
