/**
 * Chat with an agent or a fleet, independent of the transport: opening or resuming a session, running
 * one user message through the target's coordination pattern (each agent's model streamed, memory put
 * into its context, everything persisted), and ending a session. The socket (services/chat-socket.ts)
 * drives it; the HTTP reads are sessions.ts.
 *
 * Inactivity rule (spec): a session is inactive when its target has no active agent or 30 minutes have
 * passed since its last message. A message to an inactive session reactivates it when the target has an
 * active agent again; otherwise it is refused with an `error` frame (`target_inactive`). Ended sessions
 * cannot be resumed.
 */

import type { Pattern } from "../../../schemas/agents.ts";
import { type Clock, isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { McpClients } from "../../mcp-client/clients.ts";
import { type AgentModels, callAgent, num } from "../runtime/agent-call.ts";
import { type CoordinationPhase, coordinate } from "../runtime/coordination.ts";
import { AgentChatError, eventFrame, type MessageContext, type Send } from "../runtime/frames.ts";
import { agentMcpTools } from "../runtime/mcp-tools.ts";
import type { AgentRecord, AgentStore } from "../stores/agents.ts";
import type { AgentChatStore, MessageRecord, SessionRecord } from "../stores/chat.ts";
import type { FleetRecord, FleetStore } from "../stores/fleets.ts";
import type { ChatTarget, ConnectParams, SocketChat } from "./chat-socket.ts";
import type { MemoryService } from "./memory.ts";

const DEFAULT_MAX_TURNS = 10;
const CONVERSATION_MESSAGES = 20;

export interface AgentChatDeps {
  chat: AgentChatStore;
  agents: Pick<AgentStore, "get" | "byIds">;
  fleets: Pick<FleetStore, "get">;
  memory: Pick<MemoryService, "recall">;
  models: AgentModels;
  /** MCP servers as tools (an agent's config lists those it may use). */
  mcp?: Pick<McpClients, "configs" | "tools" | "call">;
  now?: Clock;
}

/** A complete reply: the answer (a fleet's synthesis) and who spoke. */
export interface AgentReply {
  message_id: string;
  content: string;
  timestamp: string;
  metadata: {
    pattern: string;
    agents: { agent_id: string; agent_name: string; phase: CoordinationPhase }[];
    notices?: string[];
  };
}

/** Who takes part in a message and with which settings. */
interface Plan {
  pattern: Pattern | "single";
  members: AgentRecord[];
  lead?: AgentRecord;
  maxTurns: number;
  temperature?: number;
  /** Holders whose memory every member also recalls (the fleet). */
  holders: { id: string; type: string }[];
}

export class AgentChatService implements SocketChat {
  private readonly now: Clock;

  constructor(private readonly deps: AgentChatDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Opens a new session on a target, or resumes `session_id` (whose target, if given, must match). */
  async connect(
    owner: string,
    params: ConnectParams,
  ): Promise<{ session: SessionRecord; target: ChatTarget }> {
    if (params.session_id) {
      const session = await this.deps.chat.getSession(owner, params.session_id);
      if (!session)
        throw new AgentChatError("session_not_found", `Session ${params.session_id} not found`, 4404);
      if (session.status === "ended")
        throw new AgentChatError("session_ended", `Session ${session.id} has ended; start a new one`, 4410);
      if (
        (params.target_id && params.target_id !== session.target_id) ||
        (params.target_type && params.target_type !== session.target_type)
      )
        throw new AgentChatError(
          "target_mismatch",
          `Session ${session.id} belongs to ${session.target_type} ${session.target_id}`,
          4409,
        );
      return { session, target: await this.target(owner, session.target_type, session.target_id) };
    }
    if (!params.target_id || !params.target_type)
      throw new AgentChatError(
        "invalid_connection",
        "target_id and target_type (agent or fleet) are required",
        4400,
      );
    if (params.target_type !== "agent" && params.target_type !== "fleet")
      throw new AgentChatError("invalid_connection", "target_type must be 'agent' or 'fleet'", 4400);
    const target = await this.target(owner, params.target_type, params.target_id);
    const config: Record<string, unknown> = {};
    if (params.max_turns !== undefined) config.max_turns = params.max_turns;
    if (params.temperature !== undefined) config.temperature = params.temperature;
    const session: SessionRecord = {
      id: newId("chat", "uuid"),
      target_id: target.id,
      target_type: target.type,
      status: "active",
      config,
      message_count: 0,
      created_at: isoNow(this.now),
      last_message_at: null,
      ended_at: null,
    };
    await this.deps.chat.insertSession(owner, session);
    return { session, target };
  }

  private async target(owner: string, type: "agent" | "fleet", id: string): Promise<ChatTarget> {
    const record = type === "agent" ? await this.agentOf(owner, id) : await this.fleetOf(owner, id);
    return { id: record.id, type, name: record.name };
  }

  /** A target deleted or never there ends the connection (4404), at connect or at a later message. */
  private async agentOf(owner: string, id: string): Promise<AgentRecord> {
    const agent = await this.deps.agents.get(owner, id);
    if (!agent) throw new AgentChatError("target_not_found", `Agent ${id} not found`, 4404);
    return agent;
  }

  private async fleetOf(owner: string, id: string): Promise<FleetRecord> {
    const fleet = await this.deps.fleets.get(owner, id);
    if (!fleet) throw new AgentChatError("target_not_found", `Fleet ${id} not found`, 4404);
    return fleet;
  }

  async end(owner: string, sessionId: string): Promise<string> {
    const timestamp = isoNow(this.now);
    await this.deps.chat.setStatus(owner, sessionId, "ended", timestamp);
    return timestamp;
  }

  /**
   * Runs one user message; frames go to `send`. Resolves with the reply when it is complete (the
   * socket has it from the frames; `POST /v1/chat/messages` streaming needs the whole answer too), or
   * with nothing when it ended in an `error` frame.
   */
  async message(
    owner: string,
    sessionId: string,
    frame: { content: string; context?: MessageContext },
    send: Send,
    signal: AbortSignal,
  ): Promise<AgentReply | undefined> {
    const session = await this.deps.chat.getSession(owner, sessionId);
    if (!session) throw new AgentChatError("session_not_found", `Session ${sessionId} not found`, 4404);
    if (session.status === "ended")
      throw new AgentChatError("session_ended", `Session ${sessionId} has ended`, 4410);
    const plan = await this.plan(owner, session);
    const context = frame.context ?? {};
    // Each top-level message starts a thread named after it; follow-ups name the thread in context.
    const userId = newId("msg", "uuid");
    const threadId = context.thread_id ?? userId;
    const userMessage = await this.store(owner, session, {
      id: userId,
      role: "user",
      content: frame.content,
      sender: "user",
      receiver: session.target_id,
      thread_id: threadId,
      parent_id: context.parent_id ?? null,
      metadata: {},
    });
    const replyId = newId("msg", "uuid");
    const streaming = context.stream !== false;
    const spoke: { agent_id: string; agent_name: string; phase: CoordinationPhase }[] = [];
    const notices: string[] = [];
    const conversation = await this.conversation(owner, session.id, userMessage.id);
    let step = 0;
    // The reply stops when the socket closes (signal) or when one agent fails (run: parallel members
    // included), so no frames follow an error.
    const run = new AbortController();
    const stopped = AbortSignal.any([signal, run.signal]);
    const recall = (holders: { id: string; type: string }[], prompt: string, limit: number) =>
      this.deps.memory.recall(owner, holders, prompt, limit);

    const { mcp } = this.deps;
    const mcpTools = mcp ? (servers: string[]) => agentMcpTools(mcp, owner, servers) : undefined;
    const speak = async (agent: AgentRecord, prompt: string, phase: CoordinationPhase): Promise<string> => {
      const meta = { agent_id: agent.id, agent_name: agent.name, phase, step: ++step, reply_id: replyId };
      const text = await callAgent(
        { models: this.deps.models, recall, now: this.now, mcpTools },
        { agent, prompt, conversation, holders: plan.holders, temperature: plan.temperature },
        stopped,
        (chunk) => {
          if (streaming && !stopped.aborted)
            send({ type: "stream", message_id: replyId, chunk, is_complete: false, metadata: meta });
        },
        (event) => {
          if (event.type === "notice") notices.push(event.message);
          if (!stopped.aborted) send(eventFrame(event, replyId, meta, isoNow(this.now)));
        },
      );
      spoke.push({ agent_id: agent.id, agent_name: agent.name, phase });
      await this.store(owner, session, {
        role: "assistant",
        content: text,
        sender: agent.id,
        receiver: "user",
        thread_id: threadId,
        parent_id: userMessage.id,
        metadata: meta,
      });
      return text;
    };

    let answer: string;
    try {
      answer = await coordinate(
        {
          pattern: plan.pattern,
          members: plan.members,
          lead: plan.lead,
          maxTurns: plan.maxTurns,
          message: frame.content,
          capabilities: context.capabilities,
        },
        speak,
      );
    } catch (error) {
      run.abort();
      if (error instanceof AgentChatError && !error.closeCode) {
        send({
          type: "error",
          code: error.code,
          message: error.message,
          message_id: replyId,
          timestamp: isoNow(this.now),
        });
        return undefined;
      }
      throw error;
    }
    const metadata = {
      pattern: plan.pattern,
      agents: spoke,
      user_message_id: userMessage.id,
      ...(notices.length ? { notices } : {}),
    };
    const reply = { message_id: replyId, content: answer, timestamp: isoNow(this.now), metadata };
    if (streaming) send({ type: "stream", message_id: replyId, chunk: "", is_complete: true, metadata });
    else send({ type: "response", ...reply });
    return reply;
  }

  /** Who takes part and with which settings; refuses when the target has no active agent. */
  private async plan(owner: string, session: SessionRecord): Promise<Plan> {
    const sessionConfig = session.config;
    if (session.target_type === "agent") {
      const agent = await this.agentOf(owner, session.target_id);
      if (agent.status !== "active")
        throw new AgentChatError(
          "target_inactive",
          `Agent ${agent.name} is ${agent.status}; activate it to chat`,
        );
      return {
        pattern: "single",
        members: [agent],
        maxTurns: 1,
        temperature: num(sessionConfig.temperature),
        holders: [],
      };
    }
    const fleet = await this.fleetOf(owner, session.target_id);
    const members = fleet.status === "active" ? await this.activeMembers(owner, fleet) : [];
    if (members.length === 0)
      throw new AgentChatError(
        "target_inactive",
        `Fleet ${fleet.name} has no active agent; activate one to chat`,
      );
    const leadId = fleet.config.lead_agent_id;
    return {
      pattern: fleet.coordination_pattern,
      members,
      lead: members.find((m) => m.id === leadId),
      maxTurns: num(sessionConfig.max_turns) ?? num(fleet.config.max_turns) ?? DEFAULT_MAX_TURNS,
      temperature: num(sessionConfig.temperature) ?? num(fleet.config.temperature),
      holders: [{ id: fleet.id, type: "fleet" }],
    };
  }

  /** The fleet's members in order, skipping inactive ones. */
  private async activeMembers(owner: string, fleet: FleetRecord): Promise<AgentRecord[]> {
    const found = await this.deps.agents.byIds(owner, fleet.agent_ids);
    return fleet.agent_ids.flatMap((id) => {
      const agent = found.get(id);
      return agent && agent.status === "active" ? [agent] : [];
    });
  }

  private async conversation(owner: string, sessionId: string, skipId: string): Promise<string> {
    return (await this.deps.chat.recent(owner, sessionId, CONVERSATION_MESSAGES + 1))
      .filter((m) => m.id !== skipId)
      .slice(-CONVERSATION_MESSAGES)
      .map((m) => `${m.role === "user" ? "user" : String(m.metadata.agent_name ?? m.sender)}: ${m.content}`)
      .join("\n");
  }

  private store(
    owner: string,
    session: SessionRecord,
    message: Omit<MessageRecord, "id" | "session_id" | "timestamp" | "type"> & { id?: string },
  ): Promise<MessageRecord> {
    const record = {
      ...message,
      id: message.id ?? newId("msg", "uuid"),
      session_id: session.id,
      type: "text",
    };
    return this.deps.chat.appendMessage(owner, record, this.now());
  }
}
