/** The root model's system prompt: the REPL contract, the built-ins offered this turn, skill cards and attachments. */
import type { Skill } from "../skills/catalog.ts";

export interface PromptInput {
  tools: string[];
  skills: Skill[];
  preloaded: Skill[];
  attachments: { id: string; filename: string; mediaType: string; byteSize: number; bound: boolean }[];
  maxIters: number;
  child?: boolean;
}

export function systemPrompt(input: PromptInput): string {
  const lines = [
    input.child
      ? "You are a child run of a recursive language model. Solve the task you are given and SUBMIT the result."
      : "You are a recursive language model working in a persistent Python interpreter.",
    "Each step, answer with a short reasoning paragraph and exactly one fenced ```python block.",
    "The block runs in the same interpreter every step (variables persist); what it prints comes back to you.",
    "The sandbox has no network, no environment variables and no host files; use the built-ins below.",
    "When you have the answer, call SUBMIT(answer=...) in a block. Without code, your text is taken as the final answer.",
    `You have at most ${input.maxIters} steps.`,
    "",
    "Built-ins:",
    ...input.tools.map((name) => `- ${name}`),
    "- SUBMIT(answer=..., **fields)",
  ];
  if (input.attachments.length > 0) {
    lines.push("", "Attachments:");
    for (const a of input.attachments) {
      lines.push(
        `- ${a.filename} (${a.mediaType}, ${a.byteSize} bytes)${a.bound ? ": its text is bound to the variable `context`" : ""}`,
      );
    }
  }
  if (input.skills.length > 0) {
    lines.push("", "Skills (load one with load_skill(id) before following it):");
    for (const s of input.skills) lines.push(`- ${s.id} (version ${s.version}): ${s.description}`);
  }
  for (const s of input.preloaded) lines.push("", `# Skill ${s.id} ${s.version} (preloaded)`, s.body);
  return lines.join("\n");
}

/** Splits a model answer into its reasoning text and the Python of its fenced blocks. */
export function splitAnswer(text: string): { reasoning: string; code: string } {
  const blocks: string[] = [];
  const reasoning = text.replace(/```(?:python|py)?[ \t]*\n([\s\S]*?)```/g, (_, code: string) => {
    blocks.push(code.replace(/\s+$/, ""));
    return "";
  });
  return { reasoning: reasoning.trim(), code: blocks.join("\n\n") };
}

/** The fenced Python blocks of a user message (offline mode runs them). */
export function pythonBlocks(text: string): string[] {
  return [...text.matchAll(/```(?:python|py)[ \t]*\n([\s\S]*?)```/g)].map((m) =>
    (m[1] as string).replace(/\s+$/, ""),
  );
}
