/**
 * Chat with an agent or a fleet, independent of the transport: opening or resuming a session, running
 * one user message through the target's coordination pattern (each agent's model streamed, memory put
 * into its context, everything persisted), and ending a session. The HTTP reads are sessions-service.ts.
 *
 * Inactivity rule (spec): a session is inactive when its target has no active agent or 30 minutes have
 * passed since its last message. A message to an inactive session reactivates it when the target has an
 * active agent again; otherwise it is refused with an `error` frame (`target_inactive`). Ended sessions
 * cannot be resumed.
 */
import type { Capability, Pattern } from "../../schemas/agents.ts";
import { AppError } from "../http/errors.ts";
import { type Clock, isoNow } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import type { ModelService } from "../models/service.ts";
import type { AgentService } from "./agents-service.ts";
import type { ChatStore, MessageRecord, SessionRecord } from "./chat-store.ts";
import { coordinate, type Phase } from "./coordination.ts";
import type { MemoryService } from "./memory-service.ts";
import type { AgentRecord, FleetRecord } from "./store.ts";

/** A refusal on the socket: an `error` frame, and a close when `closeCode` is set. */
export class ChatError extends Error {
  override name = "ChatError";
  constructor(
    readonly code: string,
    message: string,
    readonly closeCode?: number,
  ) {
    super(message);
  }
}

export type Frame = Record<string, unknown> & { type: string };
export type Send = (frame: Frame) => void;

export interface ConnectParams {
  session_id?: string;
  target_id?: string;
  target_type?: string;
  max_turns?: number;
  temperature?: number;
}

export interface Target {
  id: string;
  type: "agent" | "fleet";
  name: string;
}

const DEFAULT_MAX_TURNS = 10;
const DEFAULT_MEMORY_LIMIT = 5;
const CONVERSATION_MESSAGES = 20;

export class ChatService {
  constructor(
    private readonly chat: ChatStore,
    private readonly agents: AgentService,
    private readonly memory: MemoryService,
    private readonly models: ModelService,
    private readonly now: Clock = Date.now,
  ) {}

  /** Opens a new session on a target, or resumes `session_id` (whose target, if given, must match). */
  connect(owner: string, params: ConnectParams): { session: SessionRecord; target: Target } {
    if (params.session_id) {
      const session = this.chat.getSession(owner, params.session_id);
      if (!session) throw new ChatError("session_not_found", `Session ${params.session_id} not found`, 4404);
      if (session.status === "ended")
        throw new ChatError("session_ended", `Session ${session.id} has ended; start a new one`, 4410);
      if (
        (params.target_id && params.target_id !== session.target_id) ||
        (params.target_type && params.target_type !== session.target_type)
      )
        throw new ChatError(
          "target_mismatch",
          `Session ${session.id} belongs to ${session.target_type} ${session.target_id}`,
          4409,
        );
      return { session, target: this.target(owner, session.target_type, session.target_id) };
    }
    if (!params.target_id || !params.target_type)
      throw new ChatError(
        "invalid_connection",
        "target_id and target_type (agent or fleet) are required",
        4400,
      );
    if (params.target_type !== "agent" && params.target_type !== "fleet")
      throw new ChatError("invalid_connection", "target_type must be 'agent' or 'fleet'", 4400);
    const target = this.target(owner, params.target_type, params.target_id);
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
    this.chat.insertSession(owner, session);
    return { session, target };
  }

  private target(owner: string, type: string, id: string): Target {
    const record = type === "agent" ? this.agentOf(owner, id) : this.fleetOf(owner, id);
    return { id: record.id, type: type as Target["type"], name: record.name };
  }

  private agentOf(owner: string, id: string): AgentRecord {
    return this.found(() => this.agents.getAgent(owner, id), `Agent ${id} not found`);
  }

  private fleetOf(owner: string, id: string): FleetRecord {
    return this.found(() => this.agents.getFleet(owner, id), `Fleet ${id} not found`);
  }

  /** A target deleted or never there ends the connection (4404), at connect or at a later message. */
  private found<T>(read: () => T, message: string): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof AppError && error.kind === "not_found")
        throw new ChatError("target_not_found", message, 4404);
      throw error;
    }
  }

  end(owner: string, sessionId: string): string {
    const timestamp = isoNow(this.now);
    this.chat.setStatus(owner, sessionId, "ended", timestamp);
    return timestamp;
  }

  /** Runs one user message; frames go to `send`. Resolves when the reply is complete. */
  async message(
    owner: string,
    sessionId: string,
    frame: { content: string; context?: Record<string, unknown> },
    send: Send,
    signal: AbortSignal,
  ): Promise<void> {
    const session = this.chat.getSession(owner, sessionId);
    if (!session) throw new ChatError("session_not_found", `Session ${sessionId} not found`, 4404);
    if (session.status === "ended")
      throw new ChatError("session_ended", `Session ${sessionId} has ended`, 4410);
    const plan = this.plan(owner, session, frame.context);
    const context = frame.context ?? {};
    // Each top-level message starts a thread named after it; follow-ups name the thread in context.
    const userId = newId("msg", "uuid");
    const threadId = typeof context.thread_id === "string" ? context.thread_id : userId;
    const userMessage = this.store(owner, session, {
      id: userId,
      role: "user",
      content: frame.content,
      sender: "user",
      receiver: session.target_id,
      thread_id: threadId,
      parent_id: typeof context.parent_id === "string" ? context.parent_id : null,
      metadata: {},
    });
    const replyId = newId("msg", "uuid");
    const streaming = context.stream !== false;
    const spoke: { agent_id: string; agent_name: string; phase: Phase }[] = [];
    const conversation = this.conversation(owner, session.id, userMessage.id);
    let step = 0;
    // The reply stops when the socket closes (signal) or when one agent fails (run: parallel members
    // included), so no frames follow an error.
    const run = new AbortController();
    const stopped = AbortSignal.any([signal, run.signal]);

    const speak = async (agent: AgentRecord, prompt: string, phase: Phase): Promise<string> => {
      const meta = { agent_id: agent.id, agent_name: agent.name, phase, step: ++step, reply_id: replyId };
      const text = await this.callAgent(owner, agent, plan, prompt, conversation, stopped, (chunk) => {
        if (streaming && !stopped.aborted)
          send({ type: "stream", message_id: replyId, chunk, is_complete: false, metadata: meta });
      });
      spoke.push({ agent_id: agent.id, agent_name: agent.name, phase });
      this.store(owner, session, {
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
          capabilities: Array.isArray(context.capabilities)
            ? (context.capabilities as Capability[])
            : undefined,
        },
        speak,
      );
    } catch (error) {
      run.abort();
      if (error instanceof ChatError && !error.closeCode) {
        send({
          type: "error",
          code: error.code,
          message: error.message,
          message_id: replyId,
          timestamp: isoNow(this.now),
        });
        return;
      }
      throw error;
    }
    const metadata = { pattern: plan.pattern, agents: spoke, user_message_id: userMessage.id };
    if (streaming) send({ type: "stream", message_id: replyId, chunk: "", is_complete: true, metadata });
    else
      send({
        type: "response",
        message_id: replyId,
        content: answer,
        timestamp: isoNow(this.now),
        metadata,
      });
  }

  /** Who takes part and with which settings; refuses when the target has no active agent. */
  private plan(owner: string, session: SessionRecord, context: Record<string, unknown> | undefined) {
    const sessionConfig = session.config;
    if (session.target_type === "agent") {
      const agent = this.agentOf(owner, session.target_id);
      if (agent.status !== "active")
        throw new ChatError("target_inactive", `Agent ${agent.name} is ${agent.status}; activate it to chat`);
      return {
        pattern: "single" as const,
        members: [agent],
        lead: undefined,
        maxTurns: 1,
        temperature: num(sessionConfig.temperature),
        holders: [] as { id: string; type: string }[],
        context,
      };
    }
    const fleet = this.fleetOf(owner, session.target_id);
    const members = fleet.status === "active" ? this.agents.activeMembers(owner, fleet) : [];
    if (members.length === 0)
      throw new ChatError("target_inactive", `Fleet ${fleet.name} has no active agent; activate one to chat`);
    const leadId = fleet.config.lead_agent_id;
    return {
      pattern: fleet.coordination_pattern as Pattern,
      members,
      lead: members.find((m) => m.id === leadId),
      maxTurns: num(sessionConfig.max_turns) ?? num(fleet.config.max_turns) ?? DEFAULT_MAX_TURNS,
      temperature: num(sessionConfig.temperature) ?? num(fleet.config.temperature),
      holders: [{ id: fleet.id, type: "fleet" }],
      context,
    };
  }

  /** One agent's model call, streamed through `onChunk`, with its instructions, memory and the conversation. */
  private async callAgent(
    owner: string,
    agent: AgentRecord,
    plan: { temperature?: number; holders: { id: string; type: string }[] },
    prompt: string,
    conversation: string,
    signal: AbortSignal,
    onChunk: (chunk: string) => void,
  ): Promise<string> {
    const model = this.models.resolve(this.agents.effectiveModel(agent));
    const limit = num(agent.config.memory_limit) ?? DEFAULT_MEMORY_LIMIT;
    const memories = this.memory.recall(
      owner,
      [{ id: agent.id, type: "agent" }, ...plan.holders],
      prompt,
      limit,
    );
    const system = [
      `You are ${agent.name}, ${agent.role}.`,
      agent.description,
      agent.instructions,
      memories.length
        ? `Relevant memory:\n${memories.map((m) => `- [${m.type}] ${m.content}`).join("\n")}`
        : "",
      conversation ? `Conversation so far:\n${conversation}` : "",
    ]
      .filter(Boolean)
      .join("\n\n");
    const stream = this.models.stream(
      model,
      { systemPrompt: system, messages: [{ role: "user", content: prompt, timestamp: this.now() }] },
      {
        temperature: plan.temperature ?? num(agent.config.temperature),
        maxTokens: num(agent.config.max_tokens),
        signal,
      },
    );
    let text = "";
    for await (const event of stream) {
      if (event.type === "text_delta") {
        text += event.delta;
        onChunk(event.delta);
      } else if (event.type === "error") {
        throw new ChatError(
          "model_error",
          `${agent.name}'s model failed: ${event.error.errorMessage ?? event.reason}`,
        );
      }
    }
    return text;
  }

  private conversation(owner: string, sessionId: string, skipId: string): string {
    return this.chat
      .recent(owner, sessionId, CONVERSATION_MESSAGES + 1)
      .filter((m) => m.id !== skipId)
      .slice(-CONVERSATION_MESSAGES)
      .map((m) => `${m.role === "user" ? "user" : String(m.metadata.agent_name ?? m.sender)}: ${m.content}`)
      .join("\n");
  }

  private store(
    owner: string,
    session: SessionRecord,
    message: Omit<MessageRecord, "id" | "session_id" | "timestamp" | "type"> & { id?: string },
  ): MessageRecord {
    const record: MessageRecord = {
      ...message,
      id: message.id ?? newId("msg", "uuid"),
      session_id: session.id,
      type: "text",
      timestamp: this.chat.nextTimestamp(owner, session.id, this.now()),
    };
    this.chat.insertMessage(owner, record);
    return record;
  }
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
