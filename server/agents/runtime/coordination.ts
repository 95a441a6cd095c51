/**
 * The coordination patterns, as real orchestration of agent calls. Each pattern decides who speaks,
 * in what order and with what prompt; `speak` (supplied by the chat runtime) streams one agent's
 * contribution and returns its text. `max_turns` bounds the model calls a message may make.
 *
 * - sequential: agents in fleet order, each working on the previous one's output; the last output is the answer.
 * - parallel: members at once, then the lead (default: first member) merges their answers.
 * - hierarchical: the lead plans `Name: subtask` lines, members do their subtasks, the lead synthesises.
 * - dynamic: a capability router picks the members that fit the message; they answer in fleet order.
 */
import type { Capability, Pattern } from "../../../schemas/agents.ts";
import type { AgentRecord } from "../stores/agents.ts";

export type CoordinationPhase = "answer" | "member" | "merge" | "plan" | "synthesis";

export type Speak = (agent: AgentRecord, prompt: string, phase: CoordinationPhase) => Promise<string>;

export interface CoordinationInput {
  pattern: Pattern | "single";
  members: AgentRecord[];
  lead?: AgentRecord;
  maxTurns: number;
  message: string;
  /** Capabilities the client asked for (dynamic routing); otherwise read from the message. */
  capabilities?: Capability[];
}

export async function coordinate(input: CoordinationInput, speak: Speak): Promise<string> {
  const { members, message } = input;
  const maxTurns = Math.max(1, input.maxTurns);
  switch (input.pattern) {
    case "single":
      return speak(members[0] as AgentRecord, message, "answer");
    case "sequential":
      return sequential(members.slice(0, maxTurns), message, speak);
    case "parallel":
      return parallel(members, input.lead ?? (members[0] as AgentRecord), maxTurns, message, speak);
    case "hierarchical":
      return hierarchical(members, input.lead ?? (members[0] as AgentRecord), maxTurns, message, speak);
    case "dynamic":
      return sequentialIndependent(
        route(members, message, input.capabilities).slice(0, maxTurns),
        message,
        speak,
      );
  }
}

async function sequential(agents: AgentRecord[], message: string, speak: Speak): Promise<string> {
  let previous: { agent: AgentRecord; text: string } | undefined;
  for (const [i, agent] of agents.entries()) {
    const prompt = previous
      ? `${message}\n\nThe previous agent, ${previous.agent.name} (${previous.agent.role}), produced:\n${previous.text}\n\nWork on that output as ${agent.role}: improve, extend or correct it, and give the complete result.`
      : message;
    // The last agent's output is the answer; each one before it is a member's step towards it.
    previous = { agent, text: await speak(agent, prompt, i === agents.length - 1 ? "answer" : "member") };
  }
  return previous?.text ?? "";
}

async function sequentialIndependent(agents: AgentRecord[], message: string, speak: Speak): Promise<string> {
  const answers: { agent: AgentRecord; text: string }[] = [];
  for (const agent of agents) answers.push({ agent, text: await speak(agent, message, "answer") });
  return joinAnswers(answers);
}

async function parallel(
  members: AgentRecord[],
  lead: AgentRecord,
  maxTurns: number,
  message: string,
  speak: Speak,
): Promise<string> {
  // One call is kept for the merge when there is room for it and more than one answer to merge.
  const workers = members.slice(0, maxTurns > 1 ? Math.min(members.length, maxTurns - 1) : 1);
  const answers = await Promise.all(
    workers.map(async (agent) => ({ agent, text: await speak(agent, message, "member") })),
  );
  if (answers.length === 1) return answers[0]?.text ?? "";
  const prompt = `${message}\n\nThese agents answered independently:\n\n${joinAnswers(answers)}\n\nMerge their answers into one complete answer: keep what is right, resolve contradictions, drop repetition.`;
  return speak(lead, prompt, "merge");
}

async function hierarchical(
  members: AgentRecord[],
  lead: AgentRecord,
  maxTurns: number,
  message: string,
  speak: Speak,
): Promise<string> {
  const team = members.filter((m) => m.id !== lead.id);
  if (team.length === 0 || maxTurns < 3) return speak(lead, message, "answer");
  const roster = team
    .map((m) => `- ${m.name} (${m.role}; ${m.capabilities.join(", ") || "general"})`)
    .join("\n");
  const planPrompt = `${message}\n\nYou lead this team:\n${roster}\n\nDecompose the request into subtasks and delegate them. Reply with one line per subtask, exactly \`Name: subtask\`, using the names above.`;
  const plan = await speak(lead, planPrompt, "plan");
  let assignments = parseDelegation(plan, team);
  if (assignments.length === 0) assignments = team.map((agent) => ({ agent, task: message }));
  assignments = assignments.slice(0, maxTurns - 2);
  const results: { agent: AgentRecord; text: string }[] = [];
  for (const { agent, task } of assignments) {
    const prompt = `${task}\n\nThis subtask is part of the request: ${message}`;
    results.push({ agent, text: await speak(agent, prompt, "member") });
  }
  const synthesis = `${message}\n\nYour team's results:\n\n${joinAnswers(results)}\n\nSynthesise them into the final answer to the request.`;
  return speak(lead, synthesis, "synthesis");
}

/** `Name: subtask` lines (bullets and numbering allowed) whose name is a team member's name or id. */
export function parseDelegation(plan: string, team: AgentRecord[]): { agent: AgentRecord; task: string }[] {
  const out: { agent: AgentRecord; task: string }[] = [];
  for (const line of plan.split("\n")) {
    const m = line.match(/^\s*(?:[-*•]|\d+[.)])?\s*\**([^:*]+?)\**\s*:\s*(.+)$/);
    if (!m?.[1] || !m[2]) continue;
    const who = m[1].trim().toLowerCase();
    const agent = team.find((a) => a.name.toLowerCase() === who || a.id.toLowerCase() === who);
    if (agent) out.push({ agent, task: m[2].trim() });
  }
  return out;
}

/** Words that signal each capability; a message fits a capability when it contains one of them. */
const SIGNALS: Record<Capability, RegExp> = {
  CODE_REVIEW: /\b(review|refactor|bug|bugs|lint|code smell|pull request|pr|diff)\b/i,
  DOCUMENTATION: /\b(document|documentation|docs|readme|explain|docstring|guide|tutorial)\b/i,
  TESTING: /\b(test|tests|testing|unit test|coverage|qa|regression)\b/i,
  PLANNING: /\b(plan|planning|roadmap|steps|schedule|milestone|design|architecture)\b/i,
  RESEARCH: /\b(research|investigate|compare|find|sources|survey|why|analy[sz]e)\b/i,
  CHAT: /\b(hi|hello|hey|thanks|chat|talk)\b/i,
  EXECUTION: /\b(run|execute|deploy|build|install|implement|fix)\b/i,
};

/** The capabilities a message asks for, in the enum's order. */
export function capabilitiesOf(message: string): Capability[] {
  return (Object.keys(SIGNALS) as Capability[]).filter((c) => SIGNALS[c].test(message));
}

/**
 * Dynamic routing: members having a wanted capability (asked explicitly, else read from the message),
 * in fleet order; when none fits, the CHAT members; when there are none, the first member.
 */
export function route(members: AgentRecord[], message: string, asked?: Capability[]): AgentRecord[] {
  const wanted = asked?.length ? asked : capabilitiesOf(message);
  const fits = members.filter((m) => m.capabilities.some((c) => wanted.includes(c as Capability)));
  if (fits.length) return fits;
  const chat = members.filter((m) => m.capabilities.includes("CHAT"));
  return chat.length ? chat : members.slice(0, 1);
}

function joinAnswers(answers: { agent: AgentRecord; text: string }[]): string {
  if (answers.length === 1) return answers[0]?.text ?? "";
  return answers.map(({ agent, text }) => `### ${agent.name} (${agent.role})\n${text}`).join("\n\n");
}
