/**
 * `agent/<name-or-id>` and `fleet/<name-or-id>`: the last user message goes to the agent or fleet over
 * the agents family's `POST /v1/chat/messages` (the WebSocket's conversation over HTTP: a new session on
 * the target, its coordination pattern, memory, and the history stored in the target's chat sessions).
 * The reply is the message; who answered goes in the extra `atrium` field with the session id, so a
 * client can continue the conversation in the UI.
 */
import type { AtriumHttp } from "../mcp/http.ts";
import type { Piece } from "./output.ts";
import { fromFamily } from "./targets.ts";

interface AgentReply {
  session_id: string;
  content: string;
  agents: { agent_id: string; agent_name: string; phase: string }[];
}

export async function* agentPieces(
  http: AtriumHttp,
  target: { type: "agent" | "fleet"; id: string; content: string },
  _signal: AbortSignal,
): AsyncGenerator<Piece> {
  let reply: AgentReply;
  try {
    reply = await http.json<AgentReply>("POST", "/v1/chat/messages", {
      target_id: target.id,
      target_type: target.type,
      content: target.content,
    });
  } catch (error) {
    throw fromFamily(error);
  }
  yield { type: "text", text: reply.content };
  yield { type: "extra", key: "atrium", value: { session_id: reply.session_id, agents: reply.agents } };
  yield { type: "finish", reason: "stop" };
}
