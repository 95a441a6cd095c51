/**
 * The chat agent's `bash` (local mode) runs in the jail: driven through /api/chat with a scripted model,
 * a command cannot read its parent's environment, the data dir's app.db, reach the server's own port,
 * write outside the workspace or into the workspace's .pi/ (code pi would load); an ordinary command
 * writes its file in the workspace. With egress allowed the jail gets a network, still not the host's
 * loopback; without bubblewrap the shell still runs, as the user's own shell would.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { workspaceBashTool } from "../../server/chat/runtime/shell.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { type Event, lines } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const toolUse = { stopReason: "toolUse" as const };

function results(events: Event[]): Record<string, { isError: boolean; text: string }> {
  return Object.fromEntries(
    events
      .filter((e) => e.type === "tool" && e.part.output !== undefined)
      .map((e) => [e.part.toolCallId, { isError: e.part.isError, text: JSON.stringify(e.part.output) }]),
  );
}

test("a shell command reaches nothing of the server: environment, data dir, port, files outside, .pi/", async () => {
  const workspace = join(t.dataDir, "workspaces", "local");
  mkdirSync(workspace, { recursive: true });
  const port = new URL(server.url).port;
  const commands: Record<string, string> = {
    environ: `echo "parent=[$(tr '\\0' ' ' < /proc/$PPID/environ)]"`,
    db: "head -c 15 ../../app.db",
    port: `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`,
    outside: `echo x > ${t.dataDir}/planted.txt || echo y > ../../planted.txt`,
    pi: "mkdir -p .pi/extensions && echo 'export default () => {}' > .pi/extensions/evil.ts",
    caps: "grep CapEff /proc/self/status",
    ok: "echo hello > made.txt && cat made.txt",
  };
  const model = scripted(t, [
    fauxAssistantMessage(
      Object.entries(commands).map(([id, command]) => fauxToolCall("bash", { command }, { id })),
      toolUse,
    ),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await t.request("/api/chat", postJson({ message: "try", model: model.id })));
  model.dispose();
  const r = results(events);
  expect(r.environ?.text).toContain("parent=[]");
  expect(r.db?.isError).toBe(true);
  expect(r.db?.text).not.toContain("SQLite format");
  expect(r.port?.isError).toBe(true);
  expect(r.port?.text).not.toContain("Atrium");
  expect(existsSync(join(t.dataDir, "planted.txt"))).toBe(false);
  expect(r.pi?.isError).toBe(true);
  expect(existsSync(join(workspace, ".pi", "extensions"))).toBe(false);
  expect(r.caps?.text).toContain("CapEff:\\t0000000000000000");
  expect(r.ok).toMatchObject({ isError: false });
  expect(r.ok?.text).toContain("hello");
  expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("hello\n");
});

describe("the shell's network", () => {
  let hits = 0;
  let host: ReturnType<typeof Bun.serve>;
  const dir = tempDir();
  beforeAll(() => {
    host = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        hits++;
        return new Response("host");
      },
    });
  });
  afterAll(() => {
    host.stop(true);
    dir.remove();
  });

  async function run(network: "none" | "egress", command: string): Promise<string> {
    const tool = await workspaceBashTool(dir.path, { network });
    try {
      const result = await tool.execute("id", { command }, undefined, undefined, undefined as never);
      return JSON.stringify(result.content);
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
  }

  // A default route only when egress is on; the host's loopback and the gateway never lead to the host.
  const probe = (port: number) =>
    `awk '$2 == "00000000" {print "default-route", $3}' /proc/net/route
gw=$(awk '$2 == "00000000" {print $3}' /proc/net/route | sed 's/../& /g' | awk '{printf "%d.%d.%d.%d", "0x"$4, "0x"$3, "0x"$2, "0x"$1}')
for target in 127.0.0.1 $gw; do timeout 3 bash -c "exec 3<>/dev/tcp/$target/${port}" 2>/dev/null && echo "reached $target" || echo "refused $target"; done`;

  test("none by default: no route out, the host's port unreachable", async () => {
    const out = await run("none", probe(host.port as number));
    expect(out).not.toContain("default-route");
    expect(out).toContain("refused 127.0.0.1");
    expect(out).not.toContain("reached");
    expect(hits).toBe(0);
  });

  test("egress: a routed network through pasta, and still not the host's loopback", async () => {
    const out = await run("egress", probe(host.port as number));
    expect(out).toContain("default-route");
    expect(out).toContain("refused 127.0.0.1");
    expect(out).not.toContain("reached");
    expect(hits).toBe(0);
  });
});

test("without bubblewrap the shell still runs, in the workspace, with an allow-listed environment", async () => {
  const dir = tempDir();
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = "sk-canary-unjailed";
  try {
    const tool = await workspaceBashTool(dir.path, { isolation: "none" });
    const result = await tool.execute(
      "id",
      { command: "echo made > f.txt && pwd && env" },
      undefined,
      undefined,
      undefined as never,
    );
    const text = JSON.stringify(result.content);
    expect(text).toContain(dir.path);
    expect(text).not.toContain("sk-canary-unjailed");
    expect(readFileSync(join(dir.path, "f.txt"), "utf8")).toBe("made\n");
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
    dir.remove();
  }
});
