/**
 * Several instances behind the load balancer (docs/deploy.md, "Several instances"): the throughput of
 * GET /api/health and of one search query (POST /search/local, offline answer, over an index in
 * PostgreSQL) through HAProxy with two instances, divided by the same request sent to one instance
 * directly, measured in interleaved rounds in the same run. The setup is the end-to-end test's
 * (tests/helpers/balancer.ts: the run's own PostgreSQL, two server processes, the shipped
 * deploy/haproxy.cfg). On a 2-core machine the client, the balancer, both instances and PostgreSQL share
 * the cores, so the ratio says what the balancer's hop costs here more than what a second machine adds.
 *
 *   bun bench/balancer.ts [--seconds 3] [--rounds 3] [--connections 16]
 */
import { parseArgs } from "node:util";
import { startCluster } from "../tests/helpers/balancer.ts";
import { stopPostgres } from "../tests/helpers/postgres.ts";
import { fixtureDocuments } from "../tests/search/fixtures.ts";
import { type LoadRequest, load } from "./lib/load.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

const cluster = await startCluster();
try {
  const up = await fetch(`${cluster.url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.org", password: "correct horse battery" }),
  });
  const { token } = (await up.json()) as { token: string };
  const bearer = { authorization: `Bearer ${token}` };
  const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
  const indexed = await fetch(`${cluster.url}/search/index`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify({ documents }),
  });
  if (!indexed.ok) throw new Error(`indexing failed: ${indexed.status} ${await indexed.text()}`);
  const cases: { name: string; path: string; request: LoadRequest }[] = [
    { name: "GET /api/health", path: "/api/health", request: { method: "GET" } },
    {
      name: "POST /search/local",
      path: "/search/local",
      request: {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ query: "Where does Bob Cratchit live?" }),
      },
    },
  ];
  const direct = cluster.instances.a.url;
  console.log(`${rounds} rounds of ${seconds} s, ${connections} connections (Bun client)`);
  for (const { name, path, request } of cases) {
    const through: number[] = [];
    const one: number[] = [];
    for (let round = 0; round < rounds; round++) {
      one.push((await load(`${direct}${path}`, seconds, connections, request)).requestsPerSecond);
      through.push((await load(`${cluster.url}${path}`, seconds, connections, request)).requestsPerSecond);
    }
    const ratio = median(through) / median(one);
    console.log(
      `${name}: balancer + 2 instances ${fmt(median(through))} req/s, 1 instance directly ${fmt(median(one))} req/s, ratio ${fmt(ratio, 2)}`,
    );
  }
} finally {
  await cluster.stop();
  await stopPostgres();
}
