/**
 * The passage scorer remembers each unit's sentences and stems between questions (passages.ts
 * `unitWords`). A unit whose document changes or goes must never be answered from the remembered words:
 * the cache is keyed by the unit's text, so a changed text is a new entry. Driven over HTTP on real
 * SQLite: the same question before and after the document changes, and after it is removed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { casePart, joinCases } from "../../server/search/indexing/names.ts";
import { poolCases, unitWords } from "../../server/search/services/unit-words.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
const story = (friend: string) =>
  [
    `Ada Lovelace worked with ${friend} in London.`,
    `Every morning Ada Lovelace wrote a long letter to ${friend} about the engine.`,
    `${friend} answered Ada Lovelace from London the same day.`,
    "Charles Babbage built the engine in London with Ada Lovelace.",
  ].join("\n\n");
const send = (text: string) =>
  t.json("/search/index", postJson({ name: "words", documents: [{ name: "ada.txt", text }] }));
const ask = async () =>
  (
    await t.json<{ response: string }>(
      "/search/local",
      postJson({ index: "words", query: "Who did Ada Lovelace write a letter to every morning?" }),
    )
  ).body.response;

beforeAll(async () => {
  t = await createTestApp();
  expect((await send(story("Mary Somerville"))).status).toBe(200);
});
afterAll(() => t.close());

test("a changed text is scored on its own words, never on those remembered for the old one", () => {
  const before = unitWords("Ada wrote to Mary. She answered.");
  expect(unitWords("Ada wrote to Mary. She answered.")).toBe(before);
  const after = unitWords("Ada wrote to Charles. He answered.");
  expect(after.whole.has("charl") || after.whole.has("charles")).toBe(true);
  expect(after.whole.has("mari") || after.whole.has("mary")).toBe(false);
});

test("a pool's case counts follow its texts, never those remembered for another pool", () => {
  const pool = (second: string) => [
    { id: 1, text: "Then the Lighthouse Board met. The keeper wrote." },
    { id: 2, text: second },
  ];
  const fresh = (second: string) => joinCases(pool(second).map((u) => casePart(u.text)));
  const first = poolCases(pool("The lighthouse stood alone."));
  expect(poolCases(pool("The lighthouse stood alone."))).toBe(first);
  expect(first.stats).toEqual(fresh("The lighthouse stood alone."));
  expect([first.stats.get("lighthouse")?.lower, first.stats.get("lighthouse")?.upper]).toEqual([1, 1]);
  // The same unit ids with another text: another pool, counted anew.
  const changed = poolCases(pool("The Lighthouse stood alone."));
  expect(changed).not.toBe(first);
  expect(changed.stats).toEqual(fresh("The Lighthouse stood alone."));
  expect([changed.stats.get("lighthouse")?.lower, changed.stats.get("lighthouse")?.upper]).toEqual([0, 2]);
});

test("after the document changes, then goes, the answer follows it", async () => {
  const first = await ask();
  expect(first).toContain("Mary Somerville");
  expect((await send(story("John Herschel"))).status).toBe(200);
  const second = await ask();
  expect(second).toContain("John Herschel");
  expect(second).not.toContain("Mary Somerville");
  const removed = await t.request("/search/indexes/words/documents/ada.txt", { method: "DELETE" });
  expect(removed.status).toBe(200);
  const third = await ask();
  expect(third).not.toContain("John Herschel");
  expect(third).not.toContain("Mary Somerville");
});
