/**
 * `POST /search/index/stream`: the index build as SSE with progress per phase, then the summary; a
 * second build of the same index while one runs ends with an error frame; bad bodies are FastAPI 422s;
 * the route is in the OpenAPI document.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { readFrames } from "../helpers/streams.ts";
import { fixtureDocuments } from "./fixtures.ts";

const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const build = (body: unknown) => t.request("/search/index/stream", postJson(body));

test("streams progress through every phase, then the same summary the plain route answers", async () => {
  const response = await build({ name: "carol", documents });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/event-stream");
  const frames = await readFrames(response);
  const progress = frames.filter((f) => f.event === "progress").map((f) => JSON.parse(f.data));
  expect(new Set(progress.map((p) => p.phase))).toEqual(
    new Set(["units", "extraction", "communities", "reports"]),
  );
  for (const p of progress) expect(p.done).toBeLessThanOrEqual(p.total);
  const units = progress.filter((p) => p.phase === "units");
  expect(units.at(-1)).toEqual({ phase: "units", done: 2, total: 2 });
  const last = frames.at(-1);
  expect(last?.event).toBe("done");
  const summary = JSON.parse(last?.data ?? "{}");
  expect(summary).toMatchObject({ index: "carol", documents: 2, documents_indexed: 2 });
  expect(summary.entities).toBeGreaterThan(10);
  const list = await t.json<{ indexes: { name: string; documents: number }[] }>("/search/indexes");
  expect(list.body.indexes).toContainEqual(expect.objectContaining({ name: "carol", documents: 2 }));
});

test("a second build of the same index while one runs ends with an error frame naming it", async () => {
  const first = build({ name: "twice", documents });
  const second = build({ name: "twice", documents });
  const frames = await Promise.all([first, second].map(async (r) => readFrames(await r)));
  const lasts = frames.map((f) => f.at(-1));
  expect(lasts.map((f) => f?.event).sort()).toEqual(["done", "error"]);
  const error = lasts.find((f) => f?.event === "error");
  expect(JSON.parse(error?.data ?? "{}").detail).toContain("Index 'twice' is being built");
});

test("bad bodies are 422 before any stream", async () => {
  const empty = await t.json<{ detail: { loc: string[] }[] }>(
    "/search/index/stream",
    postJson({ documents: [] }),
  );
  expect(empty.status).toBe(422);
  expect(empty.body.detail[0]?.loc).toEqual(["body", "documents"]);
  const badName = await t.json("/search/index/stream", postJson({ name: "../x", documents }));
  expect(badName.status).toBe(422);
});

test("the route is documented in the OpenAPI document under the search tag", async () => {
  const doc = await t.json<{ paths: Record<string, { post?: { tags?: string[]; responses?: object } }> }>(
    "/swagger/json",
  );
  const post = doc.body.paths["/search/index/stream"]?.post;
  expect(post?.tags).toEqual(["search"]);
  expect(JSON.stringify(post?.responses)).toContain("event: progress");
});
