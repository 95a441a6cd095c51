/**
 * Offline global answers to a specific question in parts (global-specific.ts coverOrder): after the
 * lead, the passages that add a term of the question no earlier passage holds come before the rest, so
 * a sentence answering the question's second part is given even when many sentences about the first
 * part score higher. (Issue 31: half the global misses of dev and dev2 had the fact in the context but
 * not in the answer, and three of those asked two things at once.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("a question in two parts gets a passage for each part", async () => {
  const towns = [
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
  const warnings = towns
    .map((town, i) =>
      [
        `Osric Vane walked to ${town} in the ${i + 1}th month.`,
        `In ${town} Osric Vane warned the elders that the lantern oil of the marsh burns too fast.`,
        `He warned the lamp keepers of ${town} that lantern oil kept in the cold turns thick.`,
      ].join(" "),
    )
    .join("\n\n");
  const bridge = "In the last spring Osric Vane began to build a stone bridge over the river Lune.";
  const documents = [{ name: "lanterns.txt", text: `${warnings}\n\n${bridge}` }];
  expect((await t.request("/search/index", postJson({ name: "lanterns", documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string }>(
    "/search/global",
    postJson({
      index: "lanterns",
      query: "What did Osric Vane warn about the lantern oil, and what did he build?",
    }),
  );
  expect(status).toBe(200);
  const lines = body.response.split("\n").filter((line) => /\[Data: Sources \(/.test(line));
  expect(lines.length).toBe(8);
  expect(lines.some((line) => line.includes(bridge))).toBe(true);
  // The first part is still answered, and each sentence is given once.
  expect(lines.some((line) => /warned .* lantern oil/.test(line))).toBe(true);
  expect(new Set(lines).size).toBe(lines.length);
});
