/**
 * Sources at the grain of sentences (windows.ts): offline global search gives its best units whole in
 * half the source budget, then each further unit as the windows around its ranked passages, so the same
 * 8,000 tokens hold the answering sentence of a unit that ranks too low for whole units to reach (issue
 * 31: the evidence unit ranked up to 14th of a 20-unit pool, while the budget held about six whole).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Passage } from "../../server/search/services/passages.ts";
import { GAP, sourceTexts, windowsOf } from "../../server/search/services/windows.ts";
import { estimateTokens } from "../../server/search/text.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

type Row = Record<string, string | number | boolean>;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const passage = (unit: number, text: string, score = 1): Passage => ({
  text,
  unit,
  score,
  coverage: 1,
  named: false,
  order: 0,
});

/** About 900 tokens of sentences that hold none of the question's words, different in every document. */
const filler = (place: string) =>
  Array.from(
    { length: 45 },
    (_, i) =>
      `On day ${i + 1} the fishermen of ${place} mended their nets by the harbour wall and spoke of the weather.`,
  );

describe("sentence windows", () => {
  const sentences = [
    "One is here.",
    "Two is next.",
    "Three follows.",
    "Four waits.",
    "Five ends.",
    "Six closes.",
  ];
  const unit = sentences.join(" ");

  test("a window is its passage with the sentence either side; overlapping windows merge, each sentence once", () => {
    expect(windowsOf(unit, [passage(1, "Two is next."), passage(1, "Three follows.")])).toBe(
      "One is here. Two is next. Three follows. Four waits.",
    );
    // Windows apart are kept apart, in the unit's order, whatever the passages' order.
    expect(windowsOf(unit, [passage(1, "Six closes."), passage(1, "One is here.")])).toBe(
      `One is here. Two is next.${GAP}Five ends. Six closes.`,
    );
    // A question passage carries its answer: both sentences, and one either side.
    expect(windowsOf(unit, [passage(1, "Three follows. Four waits.")])).toBe(
      "Two is next. Three follows. Four waits. Five ends.",
    );
    expect(windowsOf(unit, [passage(1, "Not in the unit at all.")])).toBeUndefined();
  });

  test("the best units are whole within their share, the rest are windows, a cited unit is whole", () => {
    const units = new Map([1, 2, 3].map((id) => [id, { id, text: unit, tokens: 600 }] as const));
    const passages = [passage(1, "Two is next."), passage(2, "Four waits."), passage(3, "Four waits.")];
    const texts = sourceTexts([1, 2, 3], units, passages, 700, new Set([3]));
    expect(texts.map((x) => x.whole)).toEqual([true, false, true]);
    expect(texts[1]?.text).toBe("Three follows. Four waits. Five ends.");
    expect(texts[1]?.tokens).toBe(estimateTokens("Three follows. Four waits. Five ends."));
  });
});

test("offline global search holds the answering sentence of a unit too low for whole units to reach", async () => {
  const page = (place: string, ...said: string[]) => {
    const lines = filler(place);
    lines.splice(20, 0, ...said);
    return { name: `${place.toLowerCase()}.txt`, text: lines.join(" ") };
  };
  // Three pages whose sentences hold every word of the question (the answer's eight points quote them),
  // nine whose sentence holds two, and the answer's page, whose sentence holds one: it ranks last, behind
  // about 11,000 tokens of whole pages.
  const documents = [
    ...["Arden", "Belwick", "Corran"].map((town, i) =>
      page(
        town,
        ...["dawn", "noon", "dusk", "midnight"].map(
          (hour) => `The keeper of ${town} polished the brass lamp of tower ${i + 1} at ${hour}.`,
        ),
      ),
    ),
    ...["Dunmore", "Elstow", "Farrow", "Glenby", "Harlow", "Ivel", "Jarrow", "Kell", "Lorne"].map((town, i) =>
      page(town, `The keeper of ${town} trimmed the lamp of tower ${i + 4} every evening.`),
    ),
    page("Nantucket", "The lamp burned whale oil brought from Nantucket."),
  ];
  expect((await t.request("/search/index", postJson({ name: "lamps", documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string; context_data: Record<string, Row[]> }>(
    "/search/global",
    postJson({ index: "lamps", query: "What did the keeper put in the brass lamp?" }),
  );
  expect(status).toBe(200);
  const given = (body.context_data.sources ?? []).filter((s) => s.in_context);
  const answer = given.find((s) => String(s.text).includes("whale oil brought from Nantucket"));
  expect(answer).toBeDefined();
  // It is there as its window: the sentence and its neighbours, not the whole page.
  expect(String(answer?.text)).toMatch(/^On day 20 the fishermen of Nantucket .* On day 21 the fishermen/);
  expect(estimateTokens(String(answer?.text))).toBeLessThan(100);
  // The same budget holds it: the sources given fit 8,000 tokens (the units' own counts for whole ones).
  const used = given.reduce((sum, s) => sum + estimateTokens(String(s.text)), 0);
  expect(used).toBeLessThanOrEqual(8_000 * 1.05);
  // Every cited source is in context and holds the sentence it is cited for.
  for (const line of body.response.split("\n").filter((l) => /Sources \(\d+\)/.test(l))) {
    const id = line.match(/Sources \((\d+)\)/)?.[1];
    const quoted = line
      .replace(/^- /, "")
      .replace(/ \[Data:.*$/, "")
      .replace(/^The text does not say this directly\. The nearest passage is: /, "");
    const row = given.find((s) => s.id === id);
    expect(String(row?.text).replace(/\s+/g, " ")).toContain(quoted.replace(/^\*\*[^*]+\*\*: /, ""));
  }
});
