/**
 * The `run_python` tool: Python run as a turn of the turns family (`POST /api/sessions/{id}/turns`,
 * SSE), in the user's sandbox like any turn. Each step's code and output is reported as MCP progress;
 * the result is the answer, the printed output and links to the artifacts the code created. A turn is
 * durable (it keeps running when its client leaves), so a cancelled call, or a client that went away,
 * cancels the run explicitly (`PUT /api/runs/{id}/cancellation`).
 */
import type { AtriumHttp } from "./http.ts";
import { sseFrames } from "./http.ts";
import { type Content, type ToolContext, ToolFailure } from "./types.ts";

/** Printed output kept for the result (the turn's own caps bound what it prints). */
const MAX_OUTPUT = 100_000;

interface TurnEvent {
  type?: string;
  runId?: string;
  output?: string;
  text?: string;
  final?: boolean;
  step?: number;
  artifactId?: string;
  title?: string;
  mediaType?: string;
  message?: string;
  code?: string;
}

export async function runPython(ctx: ToolContext, code: string, sessionId?: string): Promise<Content[]> {
  const { http } = ctx;
  const session =
    sessionId ?? (await http.json<{ id: string }>("POST", "/api/sessions", { title: "MCP run_python" })).id;
  const response = await http.send(
    "POST",
    `/api/sessions/${encodeURIComponent(session)}/turns`,
    { text: `\`\`\`python\n${code}\n\`\`\`` },
    { "idempotency-key": crypto.randomUUID(), accept: "text/event-stream" },
  );
  let runId: string | undefined;
  let output = "";
  let answer = "";
  let failure: string | undefined;
  const artifacts: Content[] = [];
  try {
    for await (const frame of sseFrames(response.body as ReadableStream<Uint8Array>)) {
      const event = frame.data as TurnEvent;
      if (!frame.event || typeof event !== "object" || event === null) continue;
      switch (frame.event) {
        case "turn_start":
          runId = event.runId;
          ctx.progress(`turn ${runId} started`);
          break;
        case "code":
          if (event.final) ctx.progress(`step ${event.step}: running code`);
          break;
        case "output":
          if (event.final && event.output) {
            if (output.length < MAX_OUTPUT) output += event.output.slice(0, MAX_OUTPUT - output.length);
            ctx.progress(`step ${event.step}: ${event.output.length} characters of output`);
          }
          break;
        case "artifact":
          if (event.artifactId) artifacts.push(artifactLink(http, event));
          break;
        case "text":
          if (event.final) answer = event.text ?? answer;
          break;
        case "turn_error":
          failure =
            [event.message, event.code && `(${event.code})`].filter(Boolean).join(" ") || "the turn failed";
          break;
        case "turn_cancelled":
          failure = "the turn was cancelled";
          break;
      }
    }
  } finally {
    // The MCP call ended before the turn did (cancelled, or the client went away): stop the run.
    if (ctx.cancelled() && runId) await cancel(http, runId);
  }
  if (ctx.cancelled()) throw new Error("cancelled");
  const parts = [
    answer && `answer: ${answer}`,
    output && `output:\n${output}`,
    failure && `error: ${failure}`,
  ];
  const summary = parts.filter(Boolean).join("\n\n") || "(no answer and no output)";
  const result: Content[] = [
    { type: "text", text: `${summary}\n\n(turn session_id: ${session})` },
    ...artifacts,
  ];
  if (failure) throw new ToolFailure(summary, result);
  return result;
}

function artifactLink(http: AtriumHttp, event: TurnEvent): Content {
  const id = event.artifactId as string;
  return {
    type: "resource_link",
    uri: `atrium://artifacts/${id}`,
    name: event.title ?? id,
    mimeType: event.mediaType,
    description: `${http.origin}/api/artifacts/${id}/content`,
  };
}

async function cancel(http: AtriumHttp, runId: string): Promise<void> {
  try {
    await http.detached().send("PUT", `/api/runs/${encodeURIComponent(runId)}/cancellation`);
  } catch {
    // already finished: nothing to cancel
  }
}
