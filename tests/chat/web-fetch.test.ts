/**
 * web_fetch: public HTTPS only, judged after DNS, pinned to the checked address, every redirect hop
 * checked, text/JSON only and size-bounded. A resolver stub and an injectable connector drive the
 * fetcher; a real TLS server on loopback proves the connection goes to the pinned address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import {
  type Connector,
  pinnedConnector,
  type RawResponse,
  type ResolvedAddress,
  type Resolver,
  WebFetchRefused,
  webFetch,
} from "../../server/chat/runtime/web-fetch/fetcher.ts";
import { createTestApp, postJson } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

const DNS: Record<string, string[]> = {
  "public.example": ["93.184.216.34"],
  "other.example": ["198.51.99.7"],
  "rebind.example": ["127.0.0.1"],
  "private.example": ["10.1.2.3"],
  "metadata.example": ["169.254.169.254"],
  "mixed.example": ["93.184.216.34", "192.168.1.1"],
  "v6-local.example": ["::1"],
  "v6-mapped.example": ["::ffff:10.0.0.1"],
  "cgnat.example": ["100.64.0.1"],
  "raw.githubusercontent.com": ["185.199.108.133"],
};
const resolver: Resolver = async (host) =>
  (DNS[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as ResolvedAddress);

interface Canned {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}
/** A connector that answers canned responses per URL and records every connection it was asked for. */
function connector(answers: Record<string, Canned>) {
  const calls: { url: string; pinned: string }[] = [];
  const connect: Connector = async (url, pinned) => {
    calls.push({ url: url.href, pinned: pinned.address });
    const answer = answers[url.href] ?? {
      status: 404,
      headers: { "content-type": "text/plain" },
      body: "nope",
    };
    const bytes =
      typeof answer.body === "string"
        ? new TextEncoder().encode(answer.body)
        : (answer.body ?? new Uint8Array());
    const response: RawResponse = {
      status: answer.status ?? 200,
      headers: answer.headers ?? { "content-type": "text/plain" },
      body: (async function* () {
        for (let i = 0; i < bytes.length; i += 65536) yield bytes.subarray(i, i + 65536);
      })(),
      cancel: () => {},
    };
    return response;
  };
  return { connect, calls };
}

const HOSTILE = [
  "http://public.example/",
  "ftp://public.example/",
  "file:///etc/passwd",
  "https://user:pw@public.example/",
  "https://localhost/",
  "https://LOCALHOST./",
  "https://app.localhost/",
  "https://127.0.0.1/",
  "https://127.1/",
  "https://2130706433/",
  "https://0x7f000001/",
  "https://0177.0.0.1/",
  "https://0x7f.0.0.1/",
  "https://0.0.0.0/",
  "https://0/",
  "https://10.0.0.1/",
  "https://172.16.5.4/",
  "https://172.31.255.255/",
  "https://192.168.0.1/",
  "https://169.254.169.254/latest/meta-data/",
  "https://100.64.0.1/",
  "https://224.0.0.1/",
  "https://255.255.255.255/",
  "https://[::1]/",
  "https://[::]/",
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[::ffff:169.254.169.254]/",
  "https://[fe80::1]/",
  "https://[fc00::1]/",
  "https://[fd12:3456::1]/",
  "https://[ff02::1]/",
  "https://[64:ff9b::a00:1]/",
  "https://[64:ff9b::127.0.0.1]/",
  "https://[2002:7f00:1::1]/",
  "https://[2002:a9fe:a9fe::]/",
  "https://[::127.0.0.1]/",
  "https://rebind.example/",
  "https://private.example/",
  "https://metadata.example/",
  "https://mixed.example/",
  "https://v6-local.example/",
  "https://v6-mapped.example/",
  "https://cgnat.example/",
  "https://does-not-resolve.example/",
  "not a url",
];

describe("refused before any connection", () => {
  test(`${HOSTILE.length} hostile URLs: each refused, no connection opened`, async () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(30);
    const { connect, calls } = connector({});
    for (const url of HOSTILE) {
      const outcome = await webFetch(url, { resolve: resolver, connect }).then(
        () => "fetched",
        (error) => (error instanceof WebFetchRefused ? "refused" : `other: ${error}`),
      );
      expect({ url, outcome }).toEqual({ url, outcome: "refused" });
    }
    expect(calls).toEqual([]);
  });
});

describe("the success path (injected connector)", () => {
  test("text and JSON come back, pinned to the checked address", async () => {
    const { connect, calls } = connector({
      "https://public.example/page": {
        headers: { "content-type": "text/html; charset=utf-8" },
        body: "<p>hi</p>",
      },
      "https://public.example/data": { headers: { "content-type": "application/json" }, body: '{"a":1}' },
    });
    const page = await webFetch("https://public.example/page", { resolve: resolver, connect });
    expect(page).toMatchObject({
      status: 200,
      contentType: "text/html",
      content: "<p>hi</p>",
      truncated: false,
    });
    const data = await webFetch("https://public.example/data", { resolve: resolver, connect });
    expect(data.content).toBe('{"a":1}');
    expect(calls.map((c) => c.pinned)).toEqual(["93.184.216.34", "93.184.216.34"]);
  });

  test("binary types are refused; bodies are cut at the bound", async () => {
    const { connect } = connector({
      "https://public.example/img": {
        headers: { "content-type": "image/png" },
        body: new Uint8Array([137, 80]),
      },
      "https://public.example/none": { headers: {}, body: "x" },
      "https://public.example/big": { headers: { "content-type": "text/plain" }, body: "y".repeat(5000) },
    });
    await expect(webFetch("https://public.example/img", { resolve: resolver, connect })).rejects.toThrow(
      "only text and JSON",
    );
    await expect(webFetch("https://public.example/none", { resolve: resolver, connect })).rejects.toThrow(
      "only text and JSON",
    );
    const big = await webFetch("https://public.example/big", { resolve: resolver, connect, maxBytes: 1000 });
    expect(big.content.length).toBe(1000);
    expect(big.truncated).toBe(true);
  });

  test("every redirect hop is checked: to a private address, to http, and past the limit", async () => {
    const hop = (to: string): Canned => ({ status: 302, headers: { location: to } });
    const { connect, calls } = connector({
      "https://public.example/to-metadata": hop("https://169.254.169.254/"),
      "https://public.example/to-rebind": hop("https://rebind.example/x"),
      "https://public.example/to-http": hop("http://other.example/"),
      "https://public.example/relative": hop("/final"),
      "https://public.example/final": { headers: { "content-type": "text/plain" }, body: "arrived" },
      "https://public.example/loop": hop("/loop"),
    });
    for (const path of ["to-metadata", "to-rebind", "to-http", "loop"]) {
      await expect(
        webFetch(`https://public.example/${path}`, { resolve: resolver, connect }),
      ).rejects.toBeInstanceOf(WebFetchRefused);
    }
    // Only the first hops (on the public host) were ever connected to.
    expect([...new Set(calls.map((c) => new URL(c.url).host))]).toEqual(["public.example"]);
    expect((await webFetch("https://public.example/relative", { resolve: resolver, connect })).content).toBe(
      "arrived",
    );
  });

  test("repository blob URLs are fetched raw", async () => {
    const raw = "https://raw.githubusercontent.com/o/r/main/README.md";
    const { connect, calls } = connector({
      [raw]: { headers: { "content-type": "text/plain" }, body: "# readme" },
    });
    const result = await webFetch("https://github.com/o/r/blob/main/README.md", {
      resolve: resolver,
      connect,
    });
    expect(result.content).toBe("# readme");
    expect(calls[0]?.url).toBe(raw);
  });
});

describe("pinning with real sockets", () => {
  let dir: string;
  let server: Server;
  let port: number;
  let ca: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "atrium-tls-"));
    const made = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=pinned.test",
        "-addext",
        "subjectAltName=DNS:pinned.test",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stderr: "pipe" },
    );
    expect(made.exitCode).toBe(0);
    ca = readFileSync(join(dir, "cert.pem"), "utf8");
    server = createServer({ key: readFileSync(join(dir, "key.pem")), cert: ca }, (req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end(`served ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the connection goes to the pinned address, whatever the name would resolve to, and TLS checks the name", async () => {
    // pinned.test resolves nowhere: only the pinned lookup can reach the server.
    const connect = pinnedConnector({ ca });
    const response = await connect(
      new URL(`https://pinned.test:${port}/`),
      { address: "127.0.0.1", family: 4 },
      AbortSignal.timeout(5000),
    );
    let text = "";
    for await (const chunk of response.body) text += Buffer.from(chunk).toString();
    expect(response.status).toBe(200);
    expect(text).toBe(`served pinned.test:${port}`);
    // A name the certificate does not cover fails verification at the pinned address.
    await expect(
      connect(
        new URL(`https://other.test:${port}/`),
        { address: "127.0.0.1", family: 4 },
        AbortSignal.timeout(5000),
      ),
    ).rejects.toThrow();
  });
});

test("the chat runtime offers web_fetch; a request for a local address is refused in the tool result", async () => {
  const t = await createTestApp();
  try {
    const model = scripted(t, [
      fauxAssistantMessage([fauxToolCall("web_fetch", { url: "https://127.0.0.1:1/secret" }, { id: "wf" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    const events = await lines(await t.request("/api/chat", postJson({ message: "fetch", model: model.id })));
    const tool = events.filter((e) => e.type === "tool" && JSON.stringify(e).includes('"wf"'));
    expect(JSON.stringify(tool)).toContain("127.0.0.1 is not a public address");
    expect(events.at(-1)?.type).toBe("done");
    model.dispose();
  } finally {
    await t.close();
  }
});
