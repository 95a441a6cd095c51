/**
 * How the offline local answer chooses its opening (issue 31, item 2), each on a small text of its own
 * (indexed over HTTP, or as scored passages where only the choice among them is tested): the question's
 * everyday equivalents find a page that never uses its words ("tall":
 * "height"), an age is said as one ("seventy-two years old", not "twenty years ago"), a title is set in
 * italics (or small capitals: "the HISPANIOLA") and is no person, a sentence that answers opens the
 * answer over a closer match that does not, a heading of captions never does, a term elsewhere on the page counts for the sentence that answers,
 * and after a near miss the sentences that name a candidate of the kind asked come first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { extractiveAnswer } from "../../server/search/services/local-answer.ts";
import { emptyTables } from "../../server/search/services/local-context.ts";
import { leadPassage, type Passage } from "../../server/search/services/passages.ts";
import { analyseQuestion } from "../../server/search/services/question.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

type Row = Record<string, string | number | boolean>;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const ask = async (name: string, documents: { name: string; text: string }[], query: string) => {
  expect((await t.request("/search/index", postJson({ name, documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string; context_data: Record<string, Row[]> }>(
    "/search/local",
    postJson({ index: name, query }),
  );
  expect(status).toBe(200);
  const opening = body.response.split("\n\n")[0] as string;
  return { response: body.response, opening, context: body.context_data };
};

/** Filler that names the subject without saying the fact, so a plain match finds many near misses. */
const filler = (subject: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `On the ${i + 1}th morning the ${subject} stood grey against the sky while the villagers went to market and back.`,
  ).join(" ");

describe("the offline local answer's opening", () => {
  test("an everyday equivalent of the question's word finds the page that holds the fact", async () => {
    const { context } = await ask(
      "equivalents",
      [
        { name: "tower.txt", text: filler("tower of Hallam", 12) },
        {
          name: "survey.txt",
          text: "The surveyor measured the keep: its height was ninety feet above the moat.",
        },
      ],
      "How tall is the tower of Hallam?",
    );
    // The survey never says "tall" nor "tower": only "height" brings its page into the context.
    const given = (context.sources ?? []).filter((s) => s.in_context).map((s) => String(s.text));
    expect(given.some((text) => text.includes("ninety feet"))).toBe(true);
  });

  test("an age is said as one: a number of years ago is no age", async () => {
    const { opening } = await ask(
      "ages",
      [
        {
          name: "mill.txt",
          text: `The old miller came to the river twenty years ago, when the flood took the bridge. ${filler("mill", 3)} He laughed at our question and told us that he was seventy-two years old.`,
        },
      ],
      "How old is the miller?",
    );
    expect(opening).toContain("seventy-two years old");
    expect(opening).not.toContain("twenty years ago");
  });

  test("a title is set in italics, and the person who read the books is not one", async () => {
    const { opening } = await ask(
      "titles",
      [
        {
          name: "attic.txt",
          text: `Every night Martin read books aloud to the boy in the attic, and the boy listened and read with him. ${filler("attic", 2)} The boy read two books in the attic that winter: _Robinson Crusoe_ and _Gulliver's Travels_.`,
        },
      ],
      "Which books did the boy read?",
    );
    expect(opening).toContain("Robinson Crusoe");
    expect(opening).not.toMatch(/^The text does not say/);
  });

  test("a ship's name set in small capitals answers 'the name of the ship', the one near the question's words", async () => {
    const text = `${filler("harbour", 2)} The squire bought a fine schooner at the harbour, and before noon the MARIGOLD had begun her voyage south. ${filler("quay", 2)} Old Pell spoke all evening of the CORMORANT, that took him to Lisbon and back in the year of the great storm, and of the old PETREL, Harrow's old ship, that sank off Ushant with all her cargo of salt and wine.`;
    const ship = await ask(
      "capitals",
      [{ name: "ships.txt", text }],
      "What is the name of the ship the squire bought?",
    );
    expect(ship.opening).toStartWith(
      "The squire bought a fine schooner at the harbour, and before noon the MARIGOLD",
    );
    // A long sentence names its answer first: the ship beside "Harrow's old ship", not the first there.
    const harrow = await ask(
      "capitals",
      [{ name: "ships.txt", text }],
      "What was the name of Harrow's ship?",
    );
    expect(harrow.opening).toStartWith("**Petrel**");
  });

  test("a heading of captions never opens the answer, however many places it names", () => {
    const question = analyseQuestion("Where is the harbour of the fishermen?");
    const passage = (text: string, score: number, candidate?: string): Passage => ({
      text,
      unit: 1,
      score,
      coverage: 1,
      candidate,
      named: true,
      order: score,
    });
    const nearMiss = passage("The fishermen of the north coast keep a harbour of their own.", 2);
    const heading = passage(
      "ILLUSTRATIONS The harbour at London The harbour at Paris The pier",
      1.8,
      "London",
    );
    const answer = passage("The fishermen's harbour lies at Bristol, below the abbey.", 1.2, "Bristol");
    expect(leadPassage([nearMiss, heading, answer], question)).toBe(answer);
    // Nothing that answers near the best: the best, given as a near miss.
    expect(leadPassage([nearMiss, heading, { ...answer, score: 0.5 }], question)).toBe(nearMiss);
  });

  test("after a near miss, the sentences naming someone of the kind asked come first", () => {
    const query = "Who built the mill?";
    const passage = (text: string, score: number, coverage: number, candidate?: string): Passage => ({
      text,
      unit: 1,
      score,
      coverage,
      candidate,
      named: true,
      order: -score,
    });
    const passages = [
      passage("The mill was built of grey stone and slate.", 3, 1),
      passage("The mill was built beside the river in a dry summer.", 2.9, 1),
      passage("The mill was built with a tall wheel of oak.", 2.8, 1),
      passage("The mill was built to grind the valley's corn.", 2.7, 1),
      passage("Mr. Hardwick, the mason, laid its first stones.", 1, 0.3, "Mr. Hardwick"),
    ];
    const answer = extractiveAnswer(
      {
        text: "",
        tables: emptyTables(),
        entities: [],
        relationships: [],
        sources: [{ id: 1, text: passages.map((p) => p.text).join(" "), title: "mill.txt" }],
        question: analyseQuestion(query),
        passages,
      },
      query,
    );
    expect(answer).toMatch(/^The text does not say this directly/);
    const supporting = answer.split("Supporting passages:")[1] ?? "";
    expect(supporting.split("\n").filter((l) => l.startsWith("- "))[0]).toContain("Mr. Hardwick");
  });

  test("a term elsewhere on the page counts for the sentence that answers in other words", async () => {
    const { opening } = await ask(
      "page",
      [
        {
          name: "ferry.txt",
          text: `The ferryman of Ashby kept a lantern by the water and a dog at his feet. He pointed across the river to the far bank. "I have rowed here since I was a boy; I am sixty-one years old," he said. ${filler("river", 6)}`,
        },
        // "old" in other pages too: the sentence's own word is the common one, "ferryman" the rare one.
        { name: "town.txt", text: filler("old town hall", 4) },
      ],
      "How old was the ferryman of Ashby?",
    );
    expect(opening).toContain("sixty-one years old");
    expect(opening).not.toMatch(/^The text does not say/);
  });
});
