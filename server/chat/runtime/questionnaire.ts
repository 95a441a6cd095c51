/**
 * The questionnaire tool: the model asks the user one question (single choice, multiple choice or free
 * text). The turn pauses inside the tool until `POST /api/chat/question` answers it (or skips it), or the
 * run is aborted. Pending questions live in a broker per live session, keyed by tool call id.
 */
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
// The app's one TypeBox is Elysia's (`@sinclair/typebox` 0.34, through `t` in schemas/). pi's tool API
// types a tool's parameters with the `typebox` 1.x package, so a pi tool's schema is built with that
// one (with web-fetch/tool.ts). It loads with pi (piTypeBox), not when the server starts.
import type { ChatQuestion as Question, QuestionAnswer } from "../../../schemas/chat.ts";
import { piTypeBox } from "../../models/pi-sdk.ts";
import { QUESTIONNAIRE_TOOL } from "./plan.ts";

export type { Question };
export type QuestionKind = Question["kind"];
/** An answer as `POST /api/chat/question` carries it. */
export type QuestionnaireAnswer = QuestionAnswer["answer"];

export class AnswerError extends Error {
  override name = "AnswerError";
}

interface Pending {
  question: Question;
  resolve(answer: QuestionnaireAnswer): void;
}

export class QuestionBroker {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly onAsk: (question: Question) => void) {}

  ask(question: Question, signal?: AbortSignal): Promise<QuestionnaireAnswer> {
    return new Promise((resolve) => {
      const done = (answer: QuestionnaireAnswer) => {
        this.pending.delete(question.toolCallId);
        signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      const onAbort = () => done({ kind: "skip" });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(question.toolCallId, { question, resolve: done });
      this.onAsk(question);
    });
  }

  has(toolCallId: string): boolean {
    return this.pending.has(toolCallId);
  }

  questions(): Question[] {
    return [...this.pending.values()].map((p) => p.question);
  }

  /** Delivers an answer; throws AnswerError when it does not fit the question. */
  answer(toolCallId: string, answer: QuestionnaireAnswer): Question | undefined {
    const pending = this.pending.get(toolCallId);
    if (!pending) return undefined;
    validate(pending.question, answer);
    pending.resolve(answer);
    return pending.question;
  }
}

function validate(question: Question, answer: QuestionnaireAnswer): void {
  if (answer.kind === "skip") return;
  if (answer.questionId !== undefined && answer.questionId !== question.questionId)
    throw new AnswerError(`questionId '${answer.questionId}' does not match '${question.questionId}'`);
  if (answer.kind !== question.kind)
    throw new AnswerError(`the question expects a '${question.kind}' answer, got '${answer.kind}'`);
  if (answer.kind === "text") {
    if (typeof answer.text !== "string" || answer.text.trim() === "")
      throw new AnswerError("a text answer needs a non-empty text");
    return;
  }
  const ids = answer.selectedIds ?? [];
  if (ids.length === 0) throw new AnswerError("select at least one option");
  if (answer.kind === "single" && ids.length !== 1) throw new AnswerError("select exactly one option");
  const known = new Set(question.options.map((o) => o.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new AnswerError(`unknown option id(s): ${unknown.join(", ")}`);
}

/** What the model reads as the tool's result. */
export function describeAnswer(question: Question, answer: QuestionnaireAnswer): string {
  if (answer.kind === "skip") return "The user skipped the question.";
  if (answer.kind === "text") return `The user answered: ${answer.text}`;
  const labels = question.options
    .filter((o) => answer.selectedIds?.includes(o.id))
    .map((o) => `${o.label} (${o.id})`);
  return `The user selected: ${labels.join(", ")}`;
}

function params() {
  const { Type } = piTypeBox();
  return Type.Object({
    question: Type.String({ description: "The question to ask the user" }),
    kind: Type.Union([Type.Literal("single"), Type.Literal("multi"), Type.Literal("text")], {
      description: "single: pick one option; multi: pick several; text: free answer",
    }),
    id: Type.Optional(Type.String({ description: "A short id for the question" })),
    options: Type.Optional(
      Type.Array(Type.Object({ id: Type.String(), label: Type.String() }), {
        description: "The choices (for single and multi)",
      }),
    ),
  });
}
type Params = ReturnType<typeof params>;

/** A typed object, not pi's identity `defineTool`: importing that value would load pi (see pi-sdk.ts). */
export function questionnaireTool(broker: QuestionBroker): ToolDefinition<Params> {
  return {
    name: QUESTIONNAIRE_TOOL,
    label: "Ask the user",
    description:
      "Ask the user a question and wait for the answer: a single choice, a multiple choice or free text.",
    parameters: params(),
    async execute(toolCallId, params, signal) {
      const question: Question = {
        toolCallId,
        questionId: params.id ?? "q1",
        kind: params.kind,
        prompt: params.question,
        options: params.options ?? [],
      };
      const answer = await broker.ask(question, signal);
      return {
        content: [{ type: "text", text: describeAnswer(question, answer) }],
        details: { question, answer },
      };
    },
  };
}
