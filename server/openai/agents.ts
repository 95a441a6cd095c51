/**
 * `agent/<name-or-id>` and `fleet/<name-or-id>`: the last user message goes to the agent or fleet over
 * the agents family's `POST /v1/chat/messages` in its streaming form (`Accept: text/event-stream`: the
 * WebSocket's frames as they come, then the whole reply), so a new session on the target, its
 * coordination pattern, memory, and the history stored in the target's chat sessions are the family's.
 *
 * What goes where (docs/openai.md): an agent's own words are the message, streamed as it writes them.
 * A fleet's members' contributions (every step, the lead's plan and merge included) stream as
 * `reasoning_content`, each step opened by a `[name · phase]` line, and the fleet's answer (its
 * synthesis) is the message content, sent whole when the fleet has finished. Who answered goes in the
 * extra `atrium` field with the session id, so a client can continue the conversation in the UI.
 */
import { AppError } from "../http/errors.ts";
import { type AtriumHttp, sseFrames } from "../mcp/http.ts";
import { fromFamily } from "./errors.ts";
import type { Piece } from "./output.ts";

interface StreamFrame {
  chunk?: string;
  metadata?: { agent_name?: string; phase?: string; step?: number };
}

interface AgentReply {
  session_id: string;
  content: string;
  agents: { agent_id: string; agent_name: string; phase: string }[];
}

export async function* agentPieces(
  http: AtriumHttp,
  target: { type: "agent" | "fleet"; id: string; content: string },
  signal: AbortSignal,
): AsyncGenerator<Piece> {
  let response: Response;
  try {
    response = await http.send(
      "POST",
      "/v1/chat/messages",
      { target_id: target.id, target_type: target.type, content: target.content },
      { accept: "text/event-stream" },
    );
  } catch (error) {
    throw fromFamily(error);
  }
  const body = response.body as ReadableStream<Uint8Array>;
  // The OpenAI stream ended (client gone, stop sequence met): end the agents' stream, which stops the
  // model calls behind it.
  const stop = () => body.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  const fleet = target.type === "fleet";
  let step: number | undefined;
  let streamed = false;
  try {
    for await (const frame of sseFrames(body)) {
      const data = frame.data as Record<string, unknown>;
      if (typeof data !== "object" || data === null) continue;
      if (frame.event === "stream") {
        const { chunk, metadata } = data as StreamFrame;
        if (!chunk) continue;
        if (!fleet) {
          streamed = true;
          yield { type: "text", text: chunk };
          continue;
        }
        if (metadata?.step !== step) {
          step = metadata?.step;
          const opening = `${step === undefined || step <= 1 ? "" : "\n\n"}[${metadata?.agent_name ?? "?"} · ${metadata?.phase ?? "?"}]\n`;
          yield { type: "reasoning", text: opening };
        }
        yield { type: "reasoning", text: chunk };
      } else if (frame.event === "error")
        throw new AppError(
          "unavailable",
          `The ${target.type} failed: ${String(data.message ?? "no reply")}`,
          {
            status: 502,
            code: String(data.code ?? "upstream_error"),
          },
        );
      else if (frame.event === "reply") {
        const reply = data as unknown as AgentReply;
        if (!streamed) yield { type: "text", text: reply.content };
        yield { type: "extra", key: "atrium", value: { session_id: reply.session_id, agents: reply.agents } };
        yield { type: "finish", reason: "stop" };
        return;
      }
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  if (!signal.aborted)
    throw new AppError("unavailable", `The ${target.type}'s reply ended early`, { status: 502 });
}
