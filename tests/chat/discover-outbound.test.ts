/**
 * Server-side requests to URLs a user gives (model discovery, the provider connection test) follow the
 * one outbound rule (server/http/outbound/): on a team server a stored or typed Ollama URL on loopback
 * is refused before any connection (the listening test server sees none), the same whether something
 * listens there or not; an origin the operator names (APP_OUTBOUND_ALLOW, OLLAMA_BASE_URL) is reached,
 * and a redirect from it to another loopback port is not followed; in local mode a loopback Ollama is
 * the normal case and is discovered. The rule itself is driven with a resolver stub and a recording
 * connector: names that resolve to private, link-local or mixed addresses are refused with no connection.
 * Traffic goes only to loopback.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  type Connector,
  pinnedConnector,
  type RawResponse,
  type ResolvedAddress,
  type Resolver,
} from "../../server/http/outbound/connect.ts";
import { outboundFetch } from "../../server/http/outbound/fetch.ts";
import { type Namer, OutboundRefused, type OutboundRule } from "../../server/http/outbound/rule.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

interface Counting {
  port: number;
  url: string;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): void;
}

/** A loopback HTTP server that counts every TCP connection it accepts. */
async function countingServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Counting> {
  const server = createServer(handle);
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => server.close(),
  };
}

const TAGS = JSON.stringify({ models: [{ name: "llama3.2:latest" }, { name: "qwen3:4b" }] });
const ollamaTags = (_req: IncomingMessage, res: ServerResponse) => {
  res.setHeader("content-type", "application/json");
  res.end(TAGS);
};

const apps: TestApp[] = [];
const servers: Counting[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const server of servers) server.close();
});
async function app(options: Parameters<typeof createTestApp>[0] = {}) {
  const made = await createTestApp(options);
  apps.push(made);
  return made;
}
async function listening(handle: (req: IncomingMessage, res: ServerResponse) => void = ollamaTags) {
  const made = await countingServer(handle);
  servers.push(made);
  return made;
}

interface Discovered {
  reachable: boolean;
  models: { id: string }[];
  diagnostics: string[];
}
const TEAM_HINT =
  "(on a team server a URL a user gives reaches only public addresses; the operator can allow an origin with APP_OUTBOUND_ALLOW)";

async function storeOllama(t: TestApp, url: string, user = "ann") {
  const stored = await t.json(
    "/api/chat/providers",
    postJson({ provider: "ollama", apiKey: url }, asUser(user)),
  );
  expect(stored.status).toBe(200);
}

describe("a team server", () => {
  test("a stored Ollama URL on loopback is refused before connecting, listening or not", async () => {
    const t = await app(twoUsers());
    const ollama = await listening();
    const closed = await listening();
    closed.close();
    const discover = async () =>
      (await t.json<Discovered>("/api/chat/models/discover?provider=ollama", { headers: asUser("ann") }))
        .body;

    // Nothing configured: Ollama's default on the server's own machine is not probed either.
    expect(await discover()).toMatchObject({
      reachable: false,
      models: [],
      diagnostics: [
        `Ollama at http://127.0.0.1:11434/api/tags was refused before connecting: 127.0.0.1 is not a public address ${TEAM_HINT}`,
      ],
    });
    for (const [url, why] of [
      [ollama.url, ": 127.0.0.1 is not a public address"],
      [`http://localhost:${ollama.port}`, ": localhost: "],
      [`http://[::ffff:127.0.0.1]:${ollama.port}`, ": ::ffff:7f00:1 carries 127.0.0.1, not a public address"],
      [closed.url, ": 127.0.0.1 is not a public address"],
    ] as const) {
      await storeOllama(t, url);
      const found = await discover();
      expect(found.reachable).toBe(false);
      expect(found.models).toEqual([]);
      expect(found.diagnostics).toHaveLength(1);
      expect(found.diagnostics[0]).toContain(" was refused before connecting: ");
      expect(found.diagnostics[0]).toContain(why);
    }
    // A port that listens and one that does not read alike: nothing tells them apart.
    await storeOllama(t, ollama.url);
    const open = (await discover()).diagnostics[0];
    await storeOllama(t, closed.url);
    expect((await discover()).diagnostics[0]).toBe(open?.replace(`:${ollama.port}/`, `:${closed.port}/`));

    // The connection test takes the same rule, stored and typed.
    const tested = await t.json<{ ok: boolean; error: string }>(
      "/api/chat/providers/ollama/test",
      postJson({ apiKey: ollama.url }, asUser("ann")),
    );
    expect(tested.body.ok).toBe(false);
    expect(tested.body.error).toContain("was refused before connecting: 127.0.0.1 is not a public address");
    expect(ollama.connections()).toBe(0);
  });

  test("an origin the operator allows is reached; a redirect from it to another loopback port is not followed", async () => {
    const target = await listening();
    const allowed = await listening((req, res) => {
      if (req.url === "/moved/api/tags") {
        res.writeHead(302, { location: `${target.url}/api/tags` });
        res.end();
      } else ollamaTags(req, res);
    });
    const t = await app(
      twoUsers({ env: { APP_OUTBOUND_ALLOW: `${allowed.url}, https://models.example.com` } }),
    );
    const discover = async () =>
      (await t.json<Discovered>("/api/chat/models/discover?provider=ollama", { headers: asUser("ann") }))
        .body;

    await storeOllama(t, allowed.url);
    expect(await discover()).toMatchObject({ reachable: true, diagnostics: [] });
    expect((await discover()).models.map((m) => m.id)).toEqual(["llama3.2:latest", "qwen3:4b"]);

    await storeOllama(t, `${allowed.url}/moved`);
    expect(await discover()).toMatchObject({
      reachable: false,
      models: [],
      diagnostics: [`Ollama at ${allowed.url}/moved/api/tags: a redirect to ${target.url}, not followed`],
    });
    // Another port of the same host is another origin: not allowed.
    await storeOllama(t, target.url);
    expect((await discover()).diagnostics[0]).toContain("was refused before connecting");
    expect(target.connections()).toBe(0);
    expect(allowed.connections()).toBeGreaterThan(0);
  });

  test("OLLAMA_BASE_URL's origin is the operator's: a user may test it, not another port", async () => {
    const ollama = await listening();
    const other = await listening();
    const t = await app(twoUsers({ env: { OLLAMA_BASE_URL: ollama.url } }));
    const test = (apiKey: string) =>
      t.json<{ ok: boolean; detail?: string; error?: string }>(
        "/api/chat/providers/ollama/test",
        postJson({ apiKey }, asUser("ann")),
      );
    expect((await test(`${ollama.url}/`)).body).toMatchObject({
      ok: true,
      detail: `Connected to Ollama at ${ollama.url}/api/tags: 2 models`,
    });
    expect((await test(other.url)).body.error).toContain("was refused before connecting");
    expect(other.connections()).toBe(0);
  });

  test("a bad APP_OUTBOUND_ALLOW entry stops startup naming it", async () => {
    await expect(
      createTestApp({ env: { APP_OUTBOUND_ALLOW: "http://ok.example, ollama:11434/x" } }),
    ).rejects.toThrow("APP_OUTBOUND_ALLOW origin 'ollama:11434/x' must start with http:// or https://");
  });
});

test("local mode: a loopback Ollama the user stored is discovered (their own machine)", async () => {
  const ollama = await listening();
  const t = await app();
  await storeOllama(t, ollama.url, "local");
  const found = await t.json<Discovered>("/api/chat/models/discover?provider=ollama");
  expect(found.body).toMatchObject({ reachable: true, diagnostics: [] });
  expect(found.body.models.map((m) => m.id)).toEqual(["llama3.2:latest", "qwen3:4b"]);
  expect(ollama.connections()).toBeGreaterThan(0);
});

describe("the rule, with a resolver stub and a recording connector", () => {
  const DNS: Record<string, string[]> = {
    "public.example": ["93.184.216.34"],
    "private.example": ["10.1.2.3"],
    "loop.example": ["127.0.0.1"],
    "mixed.example": ["93.184.216.34", "192.168.1.1"],
    "metadata.example": ["169.254.169.254"],
    "cgnat.example": ["100.64.0.1"],
    "ula.example": ["fd00::1"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "nat64-loop.example": ["64:ff9b::7f00:1"],
    "zero.example": ["0.0.0.0"],
  };
  const resolve: Resolver = async (host) =>
    (DNS[host] ?? []).map(
      (address) => ({ address, family: address.includes(":") ? 6 : 4 }) as ResolvedAddress,
    );
  const TEAM: OutboundRule = { local: false, allowed: new Set(["http://private.example:11434"]) };
  const LOCAL: OutboundRule = { local: true, allowed: new Set() };

  /** What happened to one request: the address it was pinned to, or the refusal's kind. */
  async function outcome(rule: OutboundRule, namedBy: Namer, url: string): Promise<string> {
    const calls: string[] = [];
    const connect: Connector = async (_url, pinned) => {
      calls.push(pinned.address);
      const response: RawResponse = {
        status: 200,
        headers: {},
        body: (async function* () {})(),
        cancel: () => {},
      };
      return response;
    };
    try {
      await outboundFetch(url, { rule, namedBy, resolve, connect, signal: AbortSignal.timeout(5000) });
      return `pinned ${calls.join(",")}`;
    } catch (error) {
      expect(calls).toEqual([]);
      return error instanceof OutboundRefused ? `refused (${error.kind})` : `other: ${error}`;
    }
  }

  test("a user on a team server: public, or an origin the operator allowed; nothing else", async () => {
    const cases: Record<string, string> = {
      "http://public.example/": "pinned 93.184.216.34",
      "http://private.example:11434/api/tags": "pinned 10.1.2.3",
      "https://private.example/": "refused (address)",
      "http://loop.example/": "refused (address)",
      "http://mixed.example/": "refused (address)",
      "http://metadata.example/": "refused (address)",
      "http://cgnat.example/": "refused (address)",
      "http://ula.example/": "refused (address)",
      "http://mapped.example/": "refused (address)",
      "http://10.0.0.1/": "refused (address)",
      "http://[::1]/": "refused (address)",
      "http://nowhere.example/": "refused (unresolved)",
      "ftp://public.example/": "refused (url)",
      "file:///etc/passwd": "refused (url)",
    };
    for (const [url, expected] of Object.entries(cases))
      expect({ url, result: await outcome(TEAM, "user", url) }).toEqual({ url, result: expected });
  });

  test("a local-mode user: loopback and private networks too; link-local, 'this network' and gateway forms never", async () => {
    const cases: Record<string, string> = {
      "http://loop.example/": "pinned 127.0.0.1",
      "http://private.example/": "pinned 10.1.2.3",
      "http://mixed.example/": "pinned 93.184.216.34",
      "http://cgnat.example/": "pinned 100.64.0.1",
      "http://ula.example/": "pinned fd00::1",
      "http://mapped.example/": "pinned ::ffff:10.0.0.1",
      "http://metadata.example/": "refused (address)",
      "http://zero.example/": "refused (address)",
      "http://nat64-loop.example/": "refused (address)",
    };
    for (const [url, expected] of Object.entries(cases))
      expect({ url, result: await outcome(LOCAL, "user", url) }).toEqual({ url, result: expected });
  });

  test("a model's URL is public-only in every mode; the operator's reaches anything", async () => {
    expect(await outcome(LOCAL, "model", "http://loop.example/")).toBe("refused (address)");
    expect(await outcome(TEAM, "model", "http://private.example:11434/")).toBe("refused (address)");
    expect(await outcome(TEAM, "operator", "http://metadata.example/")).toBe("pinned 169.254.169.254");
  });

  test("a redirect is not followed unless asked, and then each hop is judged again", async () => {
    const calls: string[] = [];
    const connect: Connector = async (url) => {
      calls.push(url.href);
      return {
        status: 302,
        headers: { location: "http://loop.example/next" },
        body: (async function* () {})(),
        cancel: () => {},
      };
    };
    const request = (maxRedirects: number) =>
      outboundFetch("http://public.example/start", {
        rule: TEAM,
        namedBy: "user",
        resolve,
        connect,
        maxRedirects,
        signal: AbortSignal.timeout(5000),
      });
    await expect(request(0)).rejects.toMatchObject({ kind: "redirect" });
    await expect(request(3)).rejects.toMatchObject({ kind: "address" });
    expect(calls).toEqual(["http://public.example/start", "http://public.example/start"]);
  });

  test("the plain-HTTP connection goes to the pinned address, never to what the name resolves to", async () => {
    const server = await listening((req, res) => res.end(`served ${req.headers.host}`));
    const response = await pinnedConnector()(
      new URL(`http://pinned.test:${server.port}/`),
      { address: "127.0.0.1", family: 4 },
      AbortSignal.timeout(5000),
    );
    let text = "";
    for await (const chunk of response.body) text += Buffer.from(chunk).toString();
    expect(text).toBe(`served pinned.test:${server.port}`);
  });
});
