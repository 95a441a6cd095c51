/**
 * The mechanics of bench/search-qa.ts on a real index: a book of the set indexed offline by the real
 * pipeline, its dev questions asked offline, of the baseline, and through the model path with a scripted
 * model (pi-ai's faux provider, as CI runs it). The scripted model reads the data tables it is given and
 * answers from the first Sources row (local) or the first report (global map, then reduce), so the test can
 * check what the bench scores against what the model really saw: the cited id is a row of its prompt,
 * retrieval recall is the fact being in that prompt, and a model that always declines scores refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SentenceBaseline } from "../../bench/lib/qa-baseline.ts";
import { askBaseline, askSearch, type IndexedBooks, indexBooks, runAll } from "../../bench/lib/qa-run.ts";
import { holdsFact, type Outcome, tally } from "../../bench/lib/qa-score.ts";
import { holdsPhrase, loadHalf } from "../../bench/lib/qa-set.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { ModelService } from "../../server/models/service.ts";
import type { ModelChoice } from "../../server/search/model-calls.ts";
import { scriptedModel } from "../helpers/faux.ts";
import { tempDir } from "../helpers/tmp.ts";

const BOOK = "a_modest_proposal";
const questions = loadHalf("dev").filter((q) => q.book === BOOK);
const dir = tempDir("atrium-qa-test-");
let indexed: IndexedBooks;

beforeAll(async () => {
  indexed = await indexBooks(dir.path, [BOOK]);
});
afterAll(() => {
  indexed?.close();
  dir.remove();
});

const lastUser = (context: Context) => {
  const m = [...context.messages].reverse().find((x) => x.role === "user");
  return typeof m?.content === "string" ? m.content : "";
};

/** What the scripted model was shown per question: the local prompt, or every map prompt. */
type Seen = Map<string, { prompts: string[]; cited?: { id: string; text: string } }>;

function scripted(models: ModelService, seen: Seen, refuse = false) {
  return scriptedModel(
    models,
    Array.from({ length: 200 }, () => (context: Context) => {
      const prompt = context.systemPrompt ?? "";
      const question = lastUser(context);
      const entry = seen.get(question) ?? { prompts: [] };
      seen.set(question, entry);
      if (prompt.includes("List the key points in the reports")) {
        entry.prompts.push(prompt);
        const first = prompt.match(/\nid\|title\|content\n(\d+)\|([^|]*)\|/);
        const points = first ? [{ description: `${first[2]} [Data: Reports (${first[1]})]`, score: 60 }] : [];
        return fauxAssistantMessage(JSON.stringify({ points }));
      }
      if (prompt.includes("combining the reports of several analysts")) {
        const point = prompt.match(/Importance Score: \d+\n(.*)/)?.[1] ?? "";
        return fauxAssistantMessage(refuse ? "I do not know; the reports do not say." : point);
      }
      entry.prompts.push(prompt);
      if (refuse) return fauxAssistantMessage("The data tables do not mention this.");
      const row = prompt.match(/-----Sources-----\nid\|text\n(\d+)\|([\s\S]*?)(?=\n\d+\||$)/);
      if (!row) return fauxAssistantMessage("I am sorry but I am unable to answer this question.");
      entry.cited = { id: row[1] as string, text: row[2] as string };
      const quote = (row[2] as string).replace(/\s+/g, " ").slice(0, 300);
      return fauxAssistantMessage(`${quote} [Data: Sources (${row[1]})]`);
    }),
  );
}

describe("bench/search-qa.ts mechanics", () => {
  test("the set's book indexes through the real pipeline, and offline and baseline answer every question", async () => {
    expect(questions.length).toBe(10);
    const built = indexed.built[0];
    expect(built?.entities).toBeGreaterThan(0);
    expect(built?.tokens).toBeGreaterThan(5000);
    const offline = await runAll(questions, (q) => askSearch(indexed, q));
    const baseline = new SentenceBaseline(indexed.texts);
    const plain = await runAll(questions, (q) => askBaseline(baseline, q, indexed.normalised.get(q.book)));
    baseline.close();
    for (const outcomes of [offline, plain]) {
      expect(outcomes.map((o) => o.id)).toEqual(questions.map((q) => q.id));
      const t = tally(outcomes);
      expect(t.answerable + t.unanswerable).toBe(10);
      expect(t.named).toBeLessThanOrEqual(t.answerable);
    }
    // The baseline's context is its top sentences, and its answer the first of them.
    expect(plain.every((o) => !o.answerable || o.cited === 1)).toBe(true);
  });

  test("the model path scores what the scripted model saw and cited", async () => {
    const models = new ModelService(createEnvSource({}));
    const seen: Seen = new Map();
    const model = scripted(models, seen);
    try {
      const choice: ModelChoice = { models, model: await models.resolve(model.id) };
      const outcomes = await runAll(questions, (q) => askSearch(indexed, q, choice));
      expect(model.calls()).toBeGreaterThanOrEqual(questions.length);
      for (const [i, q] of questions.entries()) {
        const o = outcomes[i] as Outcome;
        const entry = seen.get(q.question);
        expect({ id: q.id, asked: (entry?.prompts.length ?? 0) > 0 }).toEqual({ id: q.id, asked: true });
        const prompt = entry?.prompts.join("\n") ?? "";
        // Retrieval recall is the fact being in what the model was given.
        if (o.answerable)
          expect({ id: q.id, recalled: o.recalled }).toEqual({ id: q.id, recalled: holdsFact(prompt, q) });
        if (q.mode === "local" && entry?.cited) {
          // The one id cited is a row of the prompt and resolves to the same text in context_data.
          expect(prompt).toContain(`\n${entry.cited.id}|`);
          if (o.answerable)
            expect({ id: q.id, cited: o.cited, holding: o.citedHolding }).toEqual({
              id: q.id,
              cited: 1,
              holding: holdsFact(entry.cited.text, q) ? 1 : 0,
            });
          const reply = entry.cited.text.replace(/\s+/g, " ").slice(0, 300);
          expect({ id: q.id, named: o.named }).toEqual({
            id: q.id,
            named: o.answerable && q.expected.some((e) => holdsPhrase(reply, e)),
          });
        }
      }
      const t = tally(outcomes);
      expect(t.recalled).toBeGreaterThan(0);
      expect(t.cited).toBeGreaterThan(0);
    } finally {
      model.dispose();
    }
  });

  test("a model that always declines scores every unanswerable question right and every other wrong", async () => {
    const models = new ModelService(createEnvSource({}));
    const model = scripted(models, new Map(), true);
    try {
      const choice: ModelChoice = { models, model: await models.resolve(model.id) };
      const t = tally(await runAll(questions, (q) => askSearch(indexed, q, choice)));
      expect(t.unanswerable).toBeGreaterThan(0);
      expect(t).toMatchObject({
        named: 0,
        correctRefusals: t.unanswerable,
        falseRefusals: t.answerable,
      });
    } finally {
      model.dispose();
    }
  });
});
