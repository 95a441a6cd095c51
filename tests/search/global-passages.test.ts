/**
 * Offline global answers to a specific question (global-specific.ts): the passages of the whole index
 * that answer it fill the answer's points (up to the maximum), and the communities' recurring findings
 * follow them rather than taking passage places. On dev2 the answer to a broad-sounding question was
 * often the seventh or eighth passage (issue 31: global 2 -> 4/10, dev unchanged).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("a specific global question lists eight passages before the reports' findings", async () => {
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
  const text = towns
    .map((town, i) =>
      [
        `The lantern maker Osric Vane walked to ${town} in the ${i + 1}th month.`,
        `In ${town} Osric Vane warned the elders that the lantern oil of the marsh burns too fast.`,
        `The elders of ${town} thanked Osric Vane and Mara Quill, and ${town} kept its lanterns lit all winter.`,
        `Mara Quill sold bread in ${town} market while the children of ${town} watched the river.`,
      ].join(" "),
    )
    .join("\n\n");
  const documents = [{ name: "lanterns.txt", text }];
  expect((await t.request("/search/index", postJson({ name: "lanterns", documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string }>(
    "/search/global",
    postJson({ index: "lanterns", query: "What did Osric Vane warn about the lantern oil?" }),
  );
  expect(status).toBe(200);
  const passages = body.response.split("\n").filter((line) => /\[Data: Sources \(/.test(line));
  expect(passages.length).toBe(8);
});
