/**
 * The answer type read from the noun a question asks about, when no noun follows "what" itself (issue
 * 31, third round): "What is the name of Lady Ashby's residence?" wants a place (the possessed noun, not
 * the lady), "What is Mr. Hale's yearly income?" a sum of money, "What did Mr. Crane call his house?" a
 * name; "In what year…" wants a year, a season near the question's words only comes near. Each on a small
 * text written for it, where a sentence holding more of the question's words but no answer of that type
 * would otherwise open the answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { analyseQuestion } from "../../server/search/services/question.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const opening = async (name: string, text: string, query: string) => {
  const documents = [{ name: `${name}.txt`, text }];
  expect((await t.request("/search/index", postJson({ name, documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string }>(
    "/search/local",
    postJson({ index: name, query }),
  );
  expect(status).toBe(200);
  return body.response.split("\n\n")[0] as string;
};

describe("the noun a question asks about types its answer", () => {
  test("question analysis: the possessed noun, the noun after a copula, the object of 'call'", () => {
    const typeOf = (q: string) => {
      const a = analyseQuestion(q);
      return { type: a.type, wantsName: a.wantsName };
    };
    expect(typeOf("What is the name of Lady Ashby's residence?")).toEqual({ type: "place", wantsName: true });
    expect(typeOf("What was the name of the mother of Scrooge's nephew?")).toEqual({
      type: "person",
      wantsName: true,
    });
    expect(typeOf("What is Mr. Hale's yearly income said to be?")).toEqual({
      type: "number",
      wantsName: false,
    });
    expect(analyseQuestion("What is Mr. Hale's yearly income?").measures?.has("pounds")).toBe(true);
    expect(typeOf("What did Mr. Crane call his house by the mill?")).toEqual({
      type: "place",
      wantsName: true,
    });
    // Nothing typed after the copula: still a thing.
    expect(typeOf("What was the chain made of?").type).toBe("thing");
  });

  test("the name of someone's residence is a place, not the person who lives there", async () => {
    const text = [
      "Lady Ashby kept a great many servants at her residence, and Miss Penrose was the first of them.",
      "Lady Ashby was a tall woman with a loud voice and many opinions.",
      "The carriage turned down a lane from Thornfield Park, the residence of Lady Ashby, at noon.",
      "Nobody in the village dined with her twice.",
    ].join(" ");
    expect(await opening("residence", text, "What is the name of Lady Ashby's residence?")).toContain(
      "Thornfield Park",
    );
  });

  test("an income is a sum of money", async () => {
    const text = [
      "Mr. Hale talked of his yearly income at every dinner, to the weariness of his neighbours.",
      "Mr. Hale had three daughters and a house in town.",
      "Everyone knew that Mr. Hale had an income of two thousand pounds, and no more.",
      "The daughters walked to the town every morning.",
    ].join(" ");
    expect(await opening("income", text, "What is Mr. Hale's yearly income?")).toContain(
      "two thousand pounds",
    );
  });
});

describe("a question for a year", () => {
  test("is answered by a year, not by a season near the question's words", async () => {
    const text = [
      "Anselm Vey was born in the autumn, when the vines of the valley were heavy, and his mother sang.",
      "The vines failed that year and the next.",
      "The parish book records the christening of Anselm Vey in 1764, a month after his birth.",
      "The valley forgot him soon after.",
    ].join(" ");
    const first = await opening("year", text, "In what year was Anselm Vey born?");
    expect(first).toContain("1764");
  });
});
