/**
 * Offline global answers add the retrieved sentences that open by stating the question's subject
 * (global-statements.ts): "What is the ocean to the traveller?" is answered by "The ocean is a
 * wilderness…", even when dozens of sentences that merely mention the ocean rank before it. On dev2 the
 * book's own statement sat 28th of 40 passages (issue 31: dev2 global 4 -> 5/10, dev unchanged).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { statesSubject } from "../../server/search/services/global-statements.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("a sentence states its subject only when it opens with it beside a form of to be", () => {
  expect(statesSubject("The ocean is a wilderness reaching round the globe.", ["ocean"])).toBe(true);
  expect(statesSubject("Remember that I am thy creature; I ought to be thy Adam.", ["creature"])).toBe(true);
  expect(statesSubject("Oceans are wide.", ["ocean"])).toBe(true);
  // Deep in the sentence, the same words are an aside, not what it is about.
  expect(
    statesSubject("I believe that I have no enemy on earth, and none would have been so wicked.", ["wicked"]),
  ).toBe(false);
  // Mentioning the subject without stating it, or a word that merely contains it.
  expect(statesSubject("We walked beside the ocean all day.", ["ocean"])).toBe(false);
  expect(statesSubject("The oceanic air was cold.", ["ocean"])).toBe(false);
});

test("a theme answer names what the text states its subject is, cited to the source that holds it", async () => {
  const coves = [
    "Arden",
    "Belwick",
    "Corran",
    "Dunmore",
    "Elstow",
    "Farrow",
    "Glenby",
    "Harlow",
    "Ivel",
    "Jarrow",
  ];
  const pages = coves.map((cove, i) =>
    [
      `The walkers reached ${cove} cove on the ${i + 1}th day and looked out over the ocean from the dunes.`,
      `At ${cove} the fishermen mended their nets and spoke of the ocean and its weather.`,
      `Gulls circled above ${cove} while the tide came in from the ocean across the flats.`,
    ].join(" "),
  );
  pages.push(
    "At the last light the walkers sat on the sand. The ocean is a wilderness reaching round the globe, " +
      "wilder than any jungle. They slept by the fire.",
  );
  const documents = [{ name: "shore.txt", text: pages.join("\n\n") }];
  expect((await t.request("/search/index", postJson({ name: "shore", documents }))).status).toBe(200);
  const { status, body } = await t.json<{
    response: string;
    context_data: { sources?: { id: string; text: string }[] };
  }>("/search/global", postJson({ index: "shore", query: "What is the ocean to the walkers?" }));
  expect(status).toBe(200);
  const line = body.response.split("\n").find((l) => l.includes("The ocean is a wilderness"));
  expect(line).toBeDefined();
  // The sentence is given whole, once, and its cited source holds it.
  expect(body.response.split("The ocean is a wilderness").length).toBe(2);
  expect(line).toContain("wilder than any jungle.");
  const cited = /Sources \((\d+)\)/.exec(line ?? "")?.[1];
  const source = body.context_data.sources?.find((s) => s.id === cited);
  expect(source?.text.replace(/\s+/g, " ")).toContain("The ocean is a wilderness reaching round the globe");
});
