/**
 * Sign-in limits per account and per client address, and which forwarded headers are believed: only
 * those of a proxy the operator named with --trust-proxy (real sockets, so the peer address is real).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ProxyTrust } from "../../server/auth/proxies.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { authApp, PASSWORD, signUp } from "./auth-app.ts";

// Each failed sign-in verifies an argon2id hash on purpose (no shortcut for unknown accounts): slow-ish.
setDefaultTimeout(60_000);

let t: TestApp | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;
afterEach(async () => {
  await server?.stop();
  await t?.close();
  t = server = undefined;
});

describe("per account", () => {
  test("after 5 failures the account is locked for a while, even with the right password; other accounts are not", async () => {
    t = await authApp();
    await signUp(t, "ann@example.org");
    await signUp(t, "bob@example.org");
    for (let i = 0; i < 5; i++) {
      const r = await t.request(
        "/api/auth/sign-in/email",
        postJson({ email: "ann@example.org", password: `wrong-${i}-xx` }),
      );
      expect(r.status).toBe(401);
    }
    const locked = await t.request(
      "/api/auth/sign-in/email",
      postJson({ email: "ann@example.org", password: PASSWORD }),
    );
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await locked.json()).message).toBe("Too many sign-in attempts; try again later");
    // An unknown account is limited the same way (the answer does not tell whether it exists).
    for (let i = 0; i < 5; i++)
      await t.request(
        "/api/auth/sign-in/email",
        postJson({ email: "ghost@example.org", password: "wrong-pass" }),
      );
    const ghost = await t.request(
      "/api/auth/sign-in/email",
      postJson({ email: "ghost@example.org", password: "wrong-pass" }),
    );
    expect(ghost.status).toBe(429);
    const bob = await t.request(
      "/api/auth/sign-in/email",
      postJson({ email: "bob@example.org", password: PASSWORD }),
    );
    expect(bob.status).toBe(200);
  });
});

async function failFrom(url: string, headers: Record<string, string>, n: number) {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(
      `${url}/api/auth/sign-in/email`,
      postJson({ email: `user${i}@example.org`, password: "wrong-pass" }, headers),
    );
    statuses.push(r.status);
    await r.arrayBuffer();
  }
  return statuses;
}

describe("per client address", () => {
  test("20 failures from one address lock it; forged X-Forwarded-For does not help without --trust-proxy", async () => {
    t = await authApp();
    server = listen(t);
    const statuses = await failFrom(server.url, {}, 20);
    expect(statuses.every((s) => s === 401)).toBe(true);
    // A new forwarded address per request: ignored, the socket's address is the client.
    const spoofed = await failFrom(server.url, { "x-forwarded-for": "203.0.113.77" }, 1);
    expect(spoofed).toEqual([429]);
  });

  test("behind a trusted proxy the forwarded client is limited, not the proxy; https makes the cookie Secure", async () => {
    t = await authApp({ args: ["--trust-proxy", "loopback"] });
    server = listen(t);
    const statuses = await failFrom(server.url, { "x-forwarded-for": "198.51.100.1" }, 21);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
    // Another client behind the same proxy is not affected.
    const other = await failFrom(server.url, { "x-forwarded-for": "198.51.100.2" }, 1);
    expect(other).toEqual([401]);
    const signed = await fetch(
      `${server.url}/api/auth/sign-up/email`,
      postJson(
        { email: "ann@example.org", password: PASSWORD },
        { "x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.3" },
      ),
    );
    expect(signed.status).toBe(200);
    expect(signed.headers.get("set-cookie")).toContain("; Secure");
    // HTTPS as the proxy says: the cookie is the __Host- one, and it is what the server reads then.
    const { token } = await signed.json();
    expect(signed.headers.get("set-cookie")).toStartWith(`__Host-atrium_session=${token};`);
    const list = (cookie: string, proto: string) =>
      fetch(`${server?.url}/api/chat/sessions`, {
        headers: { cookie, "x-forwarded-proto": proto, "x-forwarded-for": "198.51.100.3" },
      }).then((r) => r.status);
    expect(await list(`__Host-atrium_session=${token}`, "https")).toBe(200);
    expect(await list(`atrium_session=${token}`, "https")).toBe(401);
    expect(await list(`atrium_session=${token}`, "http")).toBe(200);
  });
});

describe("ProxyTrust", () => {
  test("believes only named proxies and picks the right-most untrusted forwarded address", () => {
    const trust = new ProxyTrust(["10.0.0.0/8", "192.0.2.5"]);
    const request = (xff: string, proto?: string) =>
      new Request("http://x/", {
        headers: { "x-forwarded-for": xff, ...(proto ? { "x-forwarded-proto": proto } : {}) },
      });
    expect(trust.clientOf(request("1.2.3.4, 10.1.1.1", "https"), "192.0.2.5")).toEqual({
      address: "1.2.3.4",
      https: true,
    });
    // A client-supplied left-most entry is not believed over the address the proxy saw.
    expect(trust.clientOf(request("6.6.6.6, 1.2.3.4"), "10.9.9.9").address).toBe("1.2.3.4");
    // An untrusted peer: headers ignored.
    expect(trust.clientOf(request("1.2.3.4", "https"), "203.0.113.9")).toEqual({
      address: "203.0.113.9",
      https: false,
    });
    expect(trust.clientOf(request("1.2.3.4"), "::ffff:10.0.0.1").address).toBe("1.2.3.4");
    expect(() => new ProxyTrust(["not-an-ip"])).toThrow("--trust-proxy");
    expect(() => new ProxyTrust(["10.0.0.0/40"])).toThrow("prefix");
  });
});
