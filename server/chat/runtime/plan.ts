/**
 * Plan and harness modes: the instructions each mode adds to the system prompt, which tools a mode
 * allows, parsing a `Plan:` numbered list into todos, `[DONE:n]` progress, and the PlanState that is
 * persisted as a custom session entry (so it survives eviction and resume).
 */
import type { Mode, PlanState, PlanTodo } from "../../../schemas/chat-records.ts";

export type PlanAction = "execute" | "refine";

export const PLAN_ENTRY_TYPE = "atrium-plan-state";
export const QUESTIONNAIRE_TOOL = "questionnaire";

export const ALL_TOOLS = [
  "read",
  "bash",
  "edit",
  "write",
  "grep",
  "find",
  "ls",
  QUESTIONNAIRE_TOOL,
  "web_fetch",
];
/** Plan mode investigates without changing anything. */
export const PLAN_TOOLS = ["read", "grep", "find", "ls", QUESTIONNAIRE_TOOL, "web_fetch"];
/** Harness mode: reading, shell, the workspace write tool and questions; general editing is refused. */
export const HARNESS_TOOLS = ["read", "bash", "grep", "find", "ls", "write", QUESTIONNAIRE_TOOL];

const TODO_TEXT_LIMIT = 50;

export function initialPlanState(mode: Mode = "agent"): PlanState {
  return { mode, executing: false, pendingDecision: false, completed: 0, total: 0, todos: [] };
}

export function toolsAllowed(state: PlanState): string[] {
  if (state.mode === "plan") return PLAN_TOOLS;
  if (state.mode === "harness") return HARNESS_TOOLS;
  return ALL_TOOLS;
}

/** The reason a tool call is refused in the current mode, or undefined when it may run. */
export function planRefusal(state: PlanState, toolName: string): string | undefined {
  if (toolsAllowed(state).includes(toolName)) return undefined;
  const allowed = toolsAllowed(state).join(", ");
  return `The tool '${toolName}' is not allowed in ${state.mode} mode (allowed: ${allowed}).`;
}

/** What the mode adds to the system prompt for a turn. */
export function modeInstructions(state: PlanState): string | undefined {
  if (state.executing && state.todos.length > 0) {
    const list = state.todos.map((t) => `${t.step}. ${t.completed ? "[done] " : ""}${t.text}`).join("\n");
    return `You are executing this plan:\n${list}\n\nWork through the steps in order. After finishing a step, write [DONE:n] with its number (for example [DONE:1]) in your reply.`;
  }
  if (state.mode === "plan") {
    return "You are in plan mode: investigate read-only (no edits, no writes, no commands that change anything). End your answer with a section that starts with the line `Plan:` followed by a numbered list of concrete steps (1. ..., 2. ...). Ask the user with the questionnaire tool when a decision is theirs.";
  }
  if (state.mode === "harness") {
    return `You are in harness mode: only these tools are available: ${HARNESS_TOOLS.join(", ")}. Do not try to edit files in place.`;
  }
  return undefined;
}

/** The numbered steps under the last `Plan:` header of a reply; text trimmed and capped. */
export function parsePlan(text: string): PlanTodo[] {
  const lines = text.split(/\r?\n/);
  let start = -1;
  for (let i = 0; i < lines.length; i++)
    if (/^\s*(\*\*)?plan:?(\*\*)?:?\s*$/i.test(lines[i] ?? "")) start = i;
  if (start === -1) {
    const inline = lines.findLastIndex((l) => /^\s*(\*\*)?plan(\*\*)?:/i.test(l));
    if (inline === -1) return [];
    start = inline;
  }
  const todos: PlanTodo[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = line.match(/^\s*(\d+)[.)]\s+(.+?)\s*$/);
    if (!match) {
      if (todos.length > 0 && line.trim() === "") continue;
      if (todos.length > 0 && !/^\s{2,}/.test(line)) break;
      continue;
    }
    const clean = (match[2] ?? "").replace(/\*\*/g, "").replace(/`/g, "").trim();
    const capped = clean.length > TODO_TEXT_LIMIT ? `${clean.slice(0, TODO_TEXT_LIMIT - 1)}…` : clean;
    todos.push({ step: todos.length + 1, text: capped, completed: false });
  }
  return todos;
}

/** Marks `[DONE:n]` steps found in text; returns whether anything changed. */
export function markDone(state: PlanState, text: string): boolean {
  let changed = false;
  for (const match of text.matchAll(/\[DONE:(\d+)\]/gi)) {
    const todo = state.todos.find((t) => t.step === Number(match[1]));
    if (todo && !todo.completed) {
      todo.completed = true;
      changed = true;
    }
  }
  if (changed) state.completed = state.todos.filter((t) => t.completed).length;
  return changed;
}

/** After a plan-mode reply: its todos become the pending plan. */
export function planFromReply(state: PlanState, reply: string): PlanState {
  const todos = parsePlan(reply);
  return {
    mode: "plan",
    executing: false,
    pendingDecision: todos.length > 0,
    completed: 0,
    total: todos.length,
    todos,
    message:
      todos.length > 0
        ? `Plan with ${todos.length} step${todos.length === 1 ? "" : "s"}: execute or refine it.`
        : (state.message ?? "No Plan: list found in the reply."),
  };
}

/** `execute`: leave plan mode and run the todos. */
export function startExecution(state: PlanState): PlanState {
  return {
    ...state,
    mode: "agent",
    executing: true,
    pendingDecision: false,
    message: `Executing ${state.total} step${state.total === 1 ? "" : "s"}.`,
  };
}

/** After an execution run: done when every step is marked. */
export function finishExecution(state: PlanState): PlanState {
  const done = state.total > 0 && state.completed === state.total;
  return {
    ...state,
    executing: !done,
    message: done ? "Plan complete." : `Completed ${state.completed} of ${state.total} steps.`,
  };
}

export function isPlanState(value: unknown): value is PlanState {
  const v = value as PlanState | undefined;
  return !!v && typeof v === "object" && Array.isArray(v.todos) && typeof v.mode === "string";
}
