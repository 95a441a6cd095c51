/**
 * `atrium turns -m` against a live server on a real port, as a script would run it: the answer and exit
 * 0; `--json` NDJSON of every event; failures with their code and message and a non-zero exit; a bad
 * URL; and a connection dropped mid-turn, retried with the same Idempotency-Key without running the
 * turn twice or losing an event.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readFrames } from "../helpers/streams.ts";
import { runCli } from "../helpers/terminal.ts";
import { tempDir } from "../helpers/tmp.ts";
import { type Ev, specEvents, turnRequest, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine.
setDefaultTimeout(120_000);

const PYTHON = "add them\n```python\nprint(sum(range(10)))\nSUBMIT('forty-five')\n```";

let t: TestApp;
/** The session the first test made; later tests continue it (a new session waits for its own sandbox). */
let shared: string;
let server: { url: string; stop(): Promise<void> };
const files = tempDir("atrium-cli-files-");

beforeAll(async () => {
  t = await turnsApp();
  server = listen(t);
});

afterAll(async () => {
  await server.stop();
  await t.close();
  files.remove();
});

async function history(sessionId: string) {
  const response = await fetch(`${server.url}/api/sessions/${sessionId}/turns`);
  return ((await response.json()) as { items: { runId: string; status: string }[] }).items;
}

/** A port nothing listens on: bound, then released. */
function closedPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

describe("atrium turns -m (one-shot)", () => {
  test("prints the answer of a Python turn and exits 0; the session it made is named on stderr", async () => {
    const run = await runCli(["turns", "--url", server.url, "-m", PYTHON]);
    expect(run.stderr).toMatch(/^session (ses_[0-9a-f]+) \(continue it with --session ses_[0-9a-f]+\)\n$/);
    expect(run).toMatchObject({ code: 0, stdout: "forty-five\n" });
    shared = run.stderr.match(/session (ses_[0-9a-f]+)/)?.[1] as string;
    expect((await history(shared)).map((turn) => turn.status)).toEqual(["completed"]);
  });

  test("APP_BASE_URL names the server when --url is absent; --session continues a session", async () => {
    const before = (await history(shared)).length;
    const again = await runCli(["turns", "--session", shared, "-m", "```python\nSUBMIT('again')\n```"], {
      env: { APP_BASE_URL: server.url },
    });
    expect(again).toEqual({ code: 0, stdout: "again\n", stderr: "" });
    expect(await history(shared)).toHaveLength(before + 1);
  });

  test("--json prints every event of the turn as one JSON line, in the stream's order", async () => {
    const run = await runCli(["turns", "--url", server.url, "--session", shared, "--json", "-m", PYTHON]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const events = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Ev);
    const types = events.map((e) => e.type).filter((type) => type !== "turn_status");
    expect(types).toEqual([
      "turn_start",
      "step_start",
      "code",
      "output",
      "step_finish",
      "text",
      "usage",
      "turn_finish",
    ]);
    expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toBe("45\n");
    expect(events.find((e) => e.type === "text")?.text).toBe("forty-five");
    const start = events.find((e) => e.type === "turn_start") as Ev;
    expect(start).toMatchObject({ sessionId: shared, delivery: "live" });
    expect((await history(shared)).at(-1)?.runId).toBe(start.runId);
  });

  test("--attach uploads files and binds them to the turn", async () => {
    const path = join(files.path, "notes.txt");
    writeFileSync(path, "alpha beta\n");
    const run = await runCli(["turns", "--url", server.url, "--json", "--attach", path, "-m", "read it"]);
    expect(run.code).toBe(0);
    const events = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Ev);
    expect(events.find((e) => e.type === "attachment")).toMatchObject({
      filename: "notes.txt",
      byteSize: 11,
    });
    const missing = await runCli([
      "turns",
      "--url",
      server.url,
      "--attach",
      join(files.path, "no"),
      "-m",
      "x",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("invalid_file: cannot attach");
  });

  test("a turn that fails exits 1 with the failure's code and message", async () => {
    const missing = await runCli(["turns", "--url", server.url, "--session", "ses_nope", "-m", "hi"]);
    expect(missing).toEqual({
      code: 1,
      stdout: "",
      stderr: "atrium turns: session_not_found: Session not found\n",
    });
    // Refused before streaming: the turns envelope's code and message.
    const invalid = await runCli(["turns", "--url", server.url, "--session", "x".repeat(101), "-m", "hi"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^atrium turns: invalid_request: .+\n$/);
  });

  test("a bad URL exits 1 naming it; a bad flag exits 2 with the usage", async () => {
    const port = closedPort();
    const refused = await runCli([
      "turns",
      "--url",
      `http://127.0.0.1:${port}`,
      "--session",
      "s",
      "-m",
      "hi",
    ]);
    expect(refused).toEqual({
      code: 1,
      stdout: "",
      stderr: `atrium turns: connection_failed: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)\n`,
    });
    const notUrl = await runCli(["turns", "--url", "not a url", "-m", "hi"]);
    expect(notUrl).toEqual({
      code: 1,
      stdout: "",
      stderr: "atrium turns: invalid_url: not a URL: not a url\n",
    });
    const flag = await runCli(["turns", "--bogus"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Usage: atrium turns");
  });

  test("a connection dropped mid-turn is retried with the same key: every event once, one run", async () => {
    const keys: string[] = [];
    let cut = false;
    // A TCP proxy that drops the first turn stream's connection right after its code event.
    const upstreamPort = Number(new URL(server.url).port);
    const proxyPort = () => proxy.port;
    type Pipe = { upstream?: Bun.Socket<undefined>; early: Uint8Array[]; turn: boolean; seen: string };
    const proxy = Bun.listen<Pipe>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          client.data = { early: [], turn: false, seen: "" };
          void Bun.connect({
            hostname: "127.0.0.1",
            port: upstreamPort,
            socket: {
              open(upstream) {
                client.data.upstream = upstream;
                for (const chunk of client.data.early.splice(0)) upstream.write(chunk);
              },
              data(_upstream, chunk) {
                client.write(chunk);
                if (!client.data.turn || cut) return;
                client.data.seen += new TextDecoder().decode(chunk);
                if (client.data.seen.includes("event: code")) {
                  cut = true;
                  client.terminate();
                }
              },
              close: () => void client.end(),
            },
          });
        },
        data(client, raw) {
          // The server answers only its own host name: the proxy passes requests on as addressed to it.
          const request = new TextDecoder()
            .decode(raw)
            .replace(`:${proxyPort()}\r\n`, `:${upstreamPort}\r\n`);
          const chunk = new TextEncoder().encode(request);
          const key = request.match(/^idempotency-key: (.+)\r$/im)?.[1];
          if (/^POST \S+\/turns /.test(request) && key) {
            client.data.turn = true;
            keys.push(key);
          }
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.early.push(chunk);
        },
        close: (client) => void client.data.upstream?.end(),
      },
    });
    try {
      const slow =
        "```python\nfor i in range(3):\n    print(i)\nx = sum(range(2_000_000))\nSUBMIT('slow')\n```";
      const via = `http://127.0.0.1:${proxy.port}`;
      const before = (await history(shared)).length;
      const run = await runCli(["turns", "--url", via, "--session", shared, "--json", "-m", slow]);
      expect(run.stderr).toContain("reconnecting (1)");
      expect(run.code).toBe(0);
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0] as string);
      const seen = run.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as Ev)
        .filter((e) => e.type !== "turn_status");
      const start = seen[0] as Ev;
      expect(start.type).toBe("turn_start");
      // Nothing ran twice: one more run in the session's history.
      const after = await history(shared);
      expect(after).toHaveLength(before + 1);
      expect(after.at(-1)?.runId).toBe(start.runId);
      // Nothing lost, nothing twice: exactly the committed run's events (a replay of the same key).
      const replay = specEvents(
        await readFrames(
          await fetch(
            `${server.url}/api/sessions/${start.sessionId}/turns`,
            turnRequest({ text: slow }, keys[0] as string),
          ),
        ),
      ).filter((e) => e.type !== "turn_status");
      const strip = (events: Ev[]) => events.map(({ delivery: _delivery, ...rest }) => rest);
      expect(strip(seen)).toEqual(strip(replay));
      expect(seen.at(-1)?.type).toBe("turn_finish");
    } finally {
      proxy.stop(true);
    }
  });
});
