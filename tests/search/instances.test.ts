/**
 * Index builds on two instances on one database (issue 28, item 1): a build of an index running on A
 * blocks a build of the same index on B with the same 409 as on one instance, and a build lease left by
 * a crashed instance stops blocking once it lapses. On app.db, or on PostgreSQL with
 * ATRIUM_TEST_DATABASE=postgres.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { LOCAL_IDENTITY } from "../../server/auth/identity.ts";
import { INDEX_LEASE } from "../../server/search/services/indexes.ts";
import { databaseEnvOf } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { readChunks } from "../helpers/streams.ts";
import { fixtureDocuments } from "./fixtures.ts";

setDefaultTimeout(120_000);

const LEASE_MS = 1500;
const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
});

async function twoInstances(): Promise<[TestApp, TestApp]> {
  const env = { APP_LEASE_MS: String(LEASE_MS) };
  const a = await createTestApp({ env });
  apps.push(a);
  const b = await createTestApp({ dataDir: a.dataDir, env: { ...databaseEnvOf(a), ...env } });
  apps.push(b);
  return [a, b];
}

/** The local mode's owner, as the lease names it. */
const LOCAL_OWNER = LOCAL_IDENTITY.id;

test("a build running on A is a 409 on B; once it ends B builds", async () => {
  const [a, b] = await twoInstances();
  const many = Array.from({ length: 6 }, (_, i) =>
    documents.map((d) => ({ ...d, name: `${i}-${d.name}` })),
  ).flat();
  const stream = await a.request("/search/index/stream", postJson({ name: "shared", documents: many }));
  const chunks = readChunks(stream.body as ReadableStream<Uint8Array>, "\n\n");
  // The first progress frame: A's build holds the index's lease now.
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) throw new Error("A's build ended before any progress");
    if (value.startsWith("event: progress")) break;
  }
  const onB = await b.json<{ detail: string }>("/search/index", postJson({ name: "shared", documents }));
  expect(onB.status).toBe(409);
  expect(onB.body.detail).toContain("Index 'shared' is being built");
  let last = "";
  for await (const chunk of chunks) last = chunk;
  expect(last).toStartWith("event: done");
  const again = await b.json("/search/index", postJson({ name: "shared", documents }));
  expect(again.status).toBe(200);
});

test("the build lease of a crashed instance blocks until it lapses, then B builds", async () => {
  const [a, b] = await twoInstances();
  // A takes the build's lease and "crashes": no more heartbeats, the lease is never released.
  expect(await a.ctx.leases.take(INDEX_LEASE, JSON.stringify([LOCAL_OWNER, "orphan"]))).toBe(true);
  a.ctx.leases.stop();
  const lease = await b.ctx.leases.get(INDEX_LEASE, JSON.stringify([LOCAL_OWNER, "orphan"]));
  const blocked = await b.json<{ detail: string }>("/search/index", postJson({ name: "orphan", documents }));
  expect(blocked.status).toBe(409);
  expect(blocked.body.detail).toContain("Index 'orphan' is being built");
  await Bun.sleep(Math.max(0, (lease?.expires_at as number) - Date.now() + 10));
  const built = await b.json<{ index: string }>("/search/index", postJson({ name: "orphan", documents }));
  expect(built.status).toBe(200);
  expect(built.body.index).toBe("orphan");
});
