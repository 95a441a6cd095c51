/**
 * Embeddings where the provider offers them: the embeddings client against a scripted OpenAI-compatible
 * `/embeddings` server on a real port, entity vectors stored in SQLite and ranked through sqlite-vec at
 * index and query time (blended with BM25), re-indexing embedding only what changed, and BM25 alone when
 * no endpoint is named, when it fails, or when the extension cannot load.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddingsClient, EmbeddingsError } from "../../server/models/embeddings.ts";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import { loadVectorExtension } from "../../server/search/stores/vector-store.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { cleanEnv, finished, MAIN } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { fixtureDocuments } from "./fixtures.ts";
import { type FakeServer, startFakeOpenAi, writeEmbeddingsPolicy } from "./openai-fake.ts";

/** A toy semantic space: one dimension per concept, counted from the words that express it. */
const CONCEPTS: string[][] = [
  ["cook", "cooks", "chef", "chefs", "butler", "butlers", "servant", "servants", "kitchen"],
  ["dead", "death", "grave", "hearse", "coffin", "buried"],
  ["child", "children", "boy", "girl", "son", "daughter"],
  ["money", "rich", "poor", "shillings", "sixpence", "twopence"],
];
function embed(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return [1, ...CONCEPTS.map((concept) => words.filter((w) => concept.includes(w)).length * 10)];
}

let failEmbeddings = false;
let fake: FakeServer;
const dir = tempDir();
beforeAll(() => {
  fake = startFakeOpenAi({
    reply: () => ({ text: "unused" }),
    embed: (texts) =>
      failEmbeddings ? { status: 503, message: "embedding model is loading" } : texts.map(embed),
  });
});
afterAll(async () => {
  await fake.stop();
  dir.remove();
});

describe("the embeddings client", () => {
  test("sends the model and texts in batches with the key, and returns vectors in input order", async () => {
    const client = new EmbeddingsClient({
      baseUrl: `${fake.url}/v1/`,
      model: "fake-embed",
      apiKey: "sk-x",
      batchSize: 2,
    });
    const before = fake.embeddings.length;
    const vectors = await client.embed(["the cooks", "a grave", "poor child"]);
    expect(vectors.map((v) => [...v])).toEqual([embed("the cooks"), embed("a grave"), embed("poor child")]);
    expect(fake.embeddings.slice(before).map((r) => r.input)).toEqual([
      ["the cooks", "a grave"],
      ["poor child"],
    ]);
    expect(fake.embeddings.at(-1)?.model).toBe("fake-embed");
    expect(fake.embeddings.at(-1)?.authorization).toBe("Bearer sk-x");
  });

  test("an endpoint error or a reply of the wrong shape is an EmbeddingsError naming it", async () => {
    failEmbeddings = true;
    try {
      const client = new EmbeddingsClient({ baseUrl: `${fake.url}/v1`, model: "m" });
      await expect(client.embed(["x"])).rejects.toThrow("503: embedding model is loading");
    } finally {
      failEmbeddings = false;
    }
    const odd = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.json({ data: [{ index: 0, embedding: ["a"] }] }),
    });
    try {
      const client = new EmbeddingsClient({ baseUrl: `http://127.0.0.1:${odd.port}`, model: "m" });
      await expect(client.embed(["x"])).rejects.toBeInstanceOf(EmbeddingsError);
      await expect(client.embed(["x", "y"])).rejects.toThrow("1 vectors for 2 texts");
    } finally {
      await odd.stop(true);
    }
    const unreachable = new EmbeddingsClient({ baseUrl: "http://127.0.0.1:9", model: "m" });
    await expect(unreachable.embed(["x"])).rejects.toThrow("unreachable");
  });

  test("where sqlite-vec cannot load, the reason is given instead of an error", () => {
    const broken = {
      loadExtension() {
        throw new Error("extension loading is disabled");
      },
    } as unknown as import("bun:sqlite").Database;
    expect(loadVectorExtension(broken)).toEqual({
      ok: false,
      reason: "the sqlite-vec extension did not load: extension loading is disabled",
    });
  });
});

describe("search with an embeddings endpoint named in the policy", () => {
  let withVectors: TestApp;
  let bm25Only: TestApp;
  const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
  beforeAll(async () => {
    const policy = writeEmbeddingsPolicy(join(dir.path, "policy.toml"));
    withVectors = await createTestApp({
      policyPath: policy,
      // Vectors need sqlite-vec or pgvector: the test cluster of the PostgreSQL run has no pgvector, so
      // this app stays on app.db there too (pgvector.test.ts runs the PostgreSQL vector path on PGlite).
      env: { APP_EMBEDDINGS_BASE_URL: `${fake.url}/v1`, APP_DATABASE_URL: "" },
    });
    bm25Only = await createTestApp();
  });
  afterAll(async () => {
    await withVectors.close();
    await bm25Only.close();
  });

  test("indexing embeds every entity once; an unchanged re-index embeds nothing", async () => {
    const before = fake.embeddings.length;
    const built = await withVectors.json<{ entities: number; vectors?: number; warnings: string[] }>(
      "/search/index",
      postJson({ documents }),
    );
    expect(built.status).toBe(200);
    expect(built.body.vectors).toBe(built.body.entities);
    expect(built.body.warnings).toEqual([]);
    const sent = fake.embeddings.slice(before).flatMap((r) => r.input);
    expect(sent).toHaveLength(built.body.entities);
    expect(sent.some((t) => t.startsWith("Lord Mayor: "))).toBe(true);

    const again = fake.embeddings.length;
    const rerun = await withVectors.json<{ vectors?: number }>("/search/index", postJson({ documents }));
    expect(rerun.body.vectors).toBe(built.body.entities);
    expect(fake.embeddings.length).toBe(again);

    const listed = await withVectors.json<{ indexes: { vectors?: unknown }[] }>("/search/indexes");
    expect(listed.body.indexes[0]?.vectors).toEqual({ model: "fake-embed", entities: built.body.entities });

    const plain = await bm25Only.json<{ vectors?: number }>("/search/index", postJson({ documents }));
    expect(plain.status).toBe(200);
    expect(plain.body.vectors).toBeUndefined();
  });

  test("local search finds by meaning what shares no word with the question", async () => {
    const query = "Who commanded a crowd of chefs and servants?";
    const entities = async (t: TestApp) =>
      (
        await t.json<{ context_data: { entities: { entity: string }[] } }>(
          "/search/local",
          postJson({ query }),
        )
      ).body.context_data.entities.map((e) => e.entity);
    const before = fake.embeddings.length;
    expect(await entities(withVectors)).toContain("Lord Mayor");
    expect(fake.embeddings.slice(before).map((r) => r.input)).toEqual([[query]]);
    expect(await entities(bm25Only)).not.toContain("Lord Mayor");
  });

  test("an endpoint failing at query time leaves search on BM25, and at index time says so", async () => {
    failEmbeddings = true;
    try {
      const { status, body } = await withVectors.json<{ response: string }>(
        "/search/local",
        postJson({ query: "Who is Jacob Marley?" }),
      );
      expect(status).toBe(200);
      expect(body.response).toContain("Marley");
      const changed = documents.map((d, i) =>
        i === 0 ? { ...d, text: `${d.text}\n\nAda Lovelace met Scrooge. Ada Lovelace laughed.` } : d,
      );
      const built = await withVectors.json<{ vectors?: number; entities: number; warnings: string[] }>(
        "/search/index",
        postJson({ documents: changed }),
      );
      expect(built.status).toBe(200);
      expect(built.body.warnings.join("\n")).toContain(
        "embedding model is loading; local search stays on BM25",
      );
      expect(built.body.vectors).toBeLessThan(built.body.entities);
    } finally {
      failEmbeddings = false;
    }
  });

  test("an entity whose text an update changes loses its vector until it is embedded again", async () => {
    const story = (extra: string) =>
      [
        "Ada Lovelace worked with Charles Babbage in London.",
        "Every morning Ada Lovelace wrote to Charles Babbage about the engine.",
        extra,
      ].join("\n\n");
    const other = "Isaac Newton wrote to Edmond Halley.\n\nEdmond Halley answered Isaac Newton.";
    const built = await withVectors.request(
      "/search/index",
      postJson({
        name: "moving",
        documents: [
          { name: "ada.txt", text: story("") },
          { name: "newton.txt", text: other },
        ],
      }),
    );
    expect(built.status).toBe(200);
    const db = withVectors.ctx.database;
    const row = (name: string) =>
      db.get<{ id: number; description: string; embed_hash: string | null }>(
        "SELECT e.id, e.description, e.embed_hash FROM search_entities e JOIN search_indexes i ON i.id = e.index_id WHERE i.name = 'moving' AND e.name = ?",
        [name],
      );
    const ada = await row("Ada Lovelace");
    const newton = await row("Isaac Newton");
    expect(ada?.embed_hash).toBeString();
    expect(newton?.embed_hash).toBeString();
    const owner = (
      await db.get<{ owner_id: string }>("SELECT owner_id FROM search_indexes WHERE name = 'moving'")
    )?.owner_id as string;
    // The same index updated without an embeddings endpoint (as the command run without one would).
    const store = new SearchStore(db, withVectors.ctx.db);
    await runIndex(store, owner, "moving", [
      { title: "ada.txt", text: story("Ada Lovelace sailed to Paris with Mary Somerville.") },
    ]);
    const changed = await row("Ada Lovelace");
    expect(changed?.id).toBe(ada?.id as number);
    expect(changed?.description).not.toBe(ada?.description as string);
    expect(changed?.embed_hash).toBeNull();
    expect((await row("Isaac Newton"))?.embed_hash).toBe(newton?.embed_hash as string);
  });
});

describe("the index command with an embeddings endpoint named in the policy", () => {
  test("embeds the entities as the server does, and says how many in its summary", async () => {
    // The command reads ./config/policy.toml of its working directory, as the server does.
    const cwd = join(dir.path, "cli-cwd");
    mkdirSync(join(cwd, "config"), { recursive: true });
    writeEmbeddingsPolicy(join(cwd, "config", "policy.toml"));
    const corpus = join(cwd, "corpus");
    mkdirSync(corpus);
    for (const d of fixtureDocuments()) writeFileSync(join(corpus, `${d.title}.txt`), d.text);
    const before = fake.embeddings.length;
    const proc = Bun.spawn([process.execPath, MAIN, "index", corpus, "--data-dir", join(cwd, "data")], {
      cwd,
      env: cleanEnv({ APP_EMBEDDINGS_BASE_URL: `${fake.url}/v1` }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const { code, stdout, stderr } = await finished(proc);
    expect({ code, stderr: stderr.includes("warning") ? stderr : "" }).toEqual({ code: 0, stderr: "" });
    const entities = Number(/entities\s+(\d+)/.exec(stdout)?.[1]);
    expect(entities).toBeGreaterThan(10);
    expect(stdout).toContain(`vectors        ${entities} (entities embedded for local search)`);
    expect(fake.embeddings.slice(before).flatMap((r) => r.input)).toHaveLength(entities);
  });
});
