// biome-ignore-all lint/suspicious/noExplicitAny: response bodies in tests are read loosely; the assertions check them.
/**
 * Home instances behind the real load balancer (issue 28, items 4 and 5): PostgreSQL, two Atrium server
 * processes on one database and one data dir, each with its address in APP_INSTANCE_URL, and HAProxy
 * with the shipped deploy/haproxy.cfg (helpers/balancer.ts). A user's chat follows the `atrium_home`
 * cookie the server sets to their home; a request pinned to the other instance is forwarded home; and
 * the chat keeps working, in the same session, while the home instance restarts and after.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { type Cluster, homeValueFor, instanceOf, startCluster } from "../helpers/balancer.ts";
import { type Event, lines } from "../helpers/streams.ts";

setDefaultTimeout(180_000);

let cluster: Cluster;
let sql: SQL;
beforeAll(async () => {
  cluster = await startCluster();
  sql = new SQL({ url: cluster.databaseUrl, max: 1 });
}, 180_000);
afterAll(async () => {
  await sql?.close();
  await cluster?.stop();
});

/** The instance (a or b) whose registered address holds `owner`'s home lease now. */
async function homeOf(owner: string): Promise<string | undefined> {
  const rows = await sql`SELECT i.url FROM leases l JOIN instances i ON i.id = l.holder
    WHERE l.kind = 'home' AND l.id = ${owner}`;
  const url = rows[0]?.url as string | undefined;
  return (Object.entries(cluster.instances).find(([, i]) => i.url === url) ?? [])[0];
}

async function chatTurn(headers: Record<string, string>, body: Record<string, unknown>) {
  const response = await fetch(`${cluster.url}/api/chat`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const events: Event[] = response.ok ? await lines(response) : [await response.json()];
  return { status: response.status, events, instance: instanceOf(response) };
}

describe("home instances", () => {
  test("a user's chat keeps working when their home instance restarts", async () => {
    const up = await fetch(`${cluster.url}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "home@example.org", password: "correct horse battery" }),
    });
    const signed = (await up.json()) as any;
    const owner = signed.user.id as string;
    const bearer = { authorization: `Bearer ${signed.token}` };

    // The first chat request answers with the user's routing cookie.
    const listed = await fetch(`${cluster.url}/api/chat/sessions`, { headers: bearer });
    expect(listed.status).toBe(200);
    const value = listed.headers.get("set-cookie")?.match(/atrium_home=([^;]+)/)?.[1] as string;
    expect(value).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const withCookie = { ...bearer, cookie: `atrium_home=${value}` };

    // The listing took the user's home on the instance it landed on; with the cookie the balancer
    // sends the user to one instance, which is that home or forwards to it (the cookie's hash and the
    // first instance need not agree: docs/deploy.md "Home instances").
    const home = (await homeOf(owner)) as "a" | "b";
    expect(["a", "b"]).toContain(home);
    const other = home === "a" ? "b" : "a";
    const first = await chatTurn(withCookie, { message: "one" });
    expect(first.status).toBe(200);
    expect(first.events.at(-1)?.type).toBe("done");
    const sessionId = first.events[0]?.sessionId as string;
    expect(await homeOf(owner)).toBe(home);

    // Pinned to the other instance, a turn is still run at home (forwarded) and streams back.
    const pinned = { ...bearer, "x-atrium-home": await homeValueFor(cluster, other) };
    const forwarded = await chatTurn(pinned, { sessionId, message: "two" });
    expect({ status: forwarded.status, instance: forwarded.instance }).toEqual({
      status: 200,
      instance: other,
    });
    expect(forwarded.events.at(-1)?.type).toBe("done");
    expect(await homeOf(owner)).toBe(home);

    // The home instance restarts: meanwhile the other takes the home over and the chat goes on.
    await cluster.instances[home].stop();
    const during = await chatTurn(withCookie, { sessionId, message: "three" });
    expect({ status: during.status, instance: during.instance }).toEqual({ status: 200, instance: other });
    expect(during.events.at(-1)?.type).toBe("done");
    expect(await homeOf(owner)).toBe(other);
    await cluster.instances[home].start();

    // Back up, the restarted instance forwards to the new home; the session has every turn.
    const after = await chatTurn(pinned, { sessionId, message: "four" });
    expect(after.status).toBe(200);
    expect(after.events.at(-1)?.type).toBe("done");
    const session = await fetch(`${cluster.url}/api/chat/session?sessionId=${sessionId}`, {
      headers: withCookie,
    });
    const text = JSON.stringify(await session.json());
    for (const message of ["one", "two", "three", "four"]) expect(text).toContain(`"${message}"`);
  });

  test("a home instance killed outright is taken over once its lease lapses", async () => {
    const up = await fetch(`${cluster.url}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "killed@example.org", password: "correct horse battery" }),
    });
    const signed = (await up.json()) as any;
    const bearer = { authorization: `Bearer ${signed.token}` };
    const onA = { ...bearer, "x-atrium-home": await homeValueFor(cluster, "a") };
    const first = await chatTurn(onA, { message: "before" });
    expect(first.events.at(-1)?.type).toBe("done");
    expect(await homeOf(signed.user.id)).toBe("a");

    await cluster.instances.a.stop("SIGKILL");
    const onB = { ...bearer, "x-atrium-home": await homeValueFor(cluster, "b") };
    const taken = await chatTurn(onB, { sessionId: first.events[0]?.sessionId, message: "after" });
    expect({ status: taken.status, instance: taken.instance }).toEqual({ status: 200, instance: "b" });
    expect(taken.events.at(-1)?.type).toBe("done");
    expect(await homeOf(signed.user.id)).toBe("b");
    await cluster.instances.a.start();
  });
});
