/** Inline cards of the transcript: the plan with its todos (Execute / Refine) and a pending question. */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { PlanState, ChatQuestion as Question } from "../../schemas/chat.ts";

export function PlanCard({
  plan,
  busy,
  onExecute,
  onRefine,
}: {
  plan: PlanState;
  busy: boolean;
  onExecute(): void;
  onRefine(text: string): void;
}): JSX.Element | null {
  const [refining, setRefining] = useState(false);
  const [text, setText] = useState("");
  if (!plan.todos?.length) return null;
  return (
    <section class="panel msg plan" aria-label="Plan">
      <h3>
        {plan.executing ? "Executing plan" : "Plan"}{" "}
        <span class="badge">
          {plan.completed}/{plan.total}
        </span>
      </h3>
      <progress max={plan.total} value={plan.completed} aria-label="Plan progress" />
      <ol class="todos">
        {plan.todos.map((t) => (
          <li key={t.step} data-done={t.completed ? "true" : "false"}>
            {t.completed ? "☑" : "☐"} {t.step}. {t.text}
          </li>
        ))}
      </ol>
      {plan.pendingDecision && !busy && (
        <div class="row">
          <button type="button" class="btn btn-primary" onClick={onExecute}>
            Execute
          </button>
          {refining ? (
            <form
              class="row"
              onSubmit={(e) => {
                e.preventDefault();
                onRefine(text);
                setRefining(false);
              }}
            >
              <label class="sr-only" for="refine-text">
                How should the plan change?
              </label>
              <input
                id="refine-text"
                value={text}
                onInput={(e) => setText((e.target as HTMLInputElement).value)}
                placeholder="How should it change?"
              />
              <button type="submit" class="btn">
                Send
              </button>
            </form>
          ) : (
            <button type="button" class="btn" onClick={() => setRefining(true)}>
              Refine
            </button>
          )}
        </div>
      )}
    </section>
  );
}

export function QuestionCard({
  question,
  onAnswer,
}: {
  question: Question;
  onAnswer(value: { selectedIds?: string[]; text?: string; skip?: boolean }): Promise<void>;
}): JSX.Element {
  const [selected, setSelected] = useState<string[]>([]);
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>();
  const send = (value: { selectedIds?: string[]; text?: string; skip?: boolean }) =>
    onAnswer(value).catch((e: Error) => setError(e.message));
  return (
    <section class="panel msg question" aria-label="Question">
      <p>
        <strong>{question.prompt}</strong>
      </p>
      {question.kind === "single" && (
        <div class="row">
          {question.options.map((o) => (
            <button key={o.id} type="button" class="btn" onClick={() => void send({ selectedIds: [o.id] })}>
              {o.label}
            </button>
          ))}
        </div>
      )}
      {question.kind === "multi" && (
        <fieldset>
          <legend class="sr-only">{question.prompt}</legend>
          {question.options.map((o) => (
            <label key={o.id} class="row">
              <input
                type="checkbox"
                checked={selected.includes(o.id)}
                onChange={(e) =>
                  setSelected((s) =>
                    (e.target as HTMLInputElement).checked ? [...s, o.id] : s.filter((x) => x !== o.id),
                  )
                }
              />
              {o.label}
            </label>
          ))}
          <button type="button" class="btn btn-primary" onClick={() => void send({ selectedIds: selected })}>
            Answer
          </button>
        </fieldset>
      )}
      {question.kind === "text" && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void send({ text });
          }}
        >
          <label class="sr-only" for="question-text">
            Your answer
          </label>
          <input
            id="question-text"
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="btn btn-primary">
            Answer
          </button>
        </form>
      )}
      <button type="button" class="btn btn-small" onClick={() => void send({ skip: true })}>
        Skip
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
