/**
 * `mcp_call(server, tool, args)` in a turn's Python (the real pyodide sandbox): a host tool served by the
 * server through the sandbox pipe (the interpreter gets no URL, token or socket), calling
 * server-everything over Streamable HTTP on loopback (local mode). Shown as a tool_call/tool_result pair
 * like every host tool; a tool's error and a server set to "ask" (nobody to ask mid-turn) fail in Python
 * with a sentence saying why.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { addHttpServers, everythingOverHttp } from "../helpers/mcp.ts";
import { createSession, type Ev, runTurn, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(120_000);

let t: TestApp;
let everything: { url: string; stop(): void };
beforeAll(async () => {
  everything = await everythingOverHttp();
  t = await turnsApp();
  await addHttpServers(
    t,
    everything.url,
    [
      ["everything", "allow"],
      ["asking", "ask"],
    ],
    { token: "never-in-python-5a1" },
  );
});
afterAll(async () => {
  await t.close();
  everything.stop();
});

const outputs = (events: Ev[]) =>
  events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output as string);

test("Python calls an MCP tool; the call shows as a host tool call", async () => {
  const session = await createSession(t);
  const code = [
    "print(mcp_call('everything', 'echo', {'message': 'from python'}))",
    "try:\n    mcp_call('asking', 'echo', {'message': 'x'})\nexcept Exception as e:\n    print('refused:', e)",
    "try:\n    mcp_call('everything', 'get-sum', {'a': 'x'})\nexcept Exception as e:\n    print('tool error:', type(e).__name__)",
    "try:\n    mcp_call('nowhere', 'echo', {})\nexcept Exception as e:\n    print('refused:', e)",
  ];
  const { events } = await runTurn(t, session, {
    text: code.map((c) => `\`\`\`python\n${c}\n\`\`\``).join("\n"),
  });
  const printed = outputs(events).join("");
  expect(printed).toContain("Echo: from python");
  expect(printed).toContain(`refused: the MCP server 'asking' asks before each call`);
  expect(printed).toContain("tool error:");
  expect(printed).toContain("refused: no MCP server named 'nowhere'");
  const calls = events.filter((e) => e.type === "tool_call" && e.toolName === "mcp_call");
  expect(calls[0]?.input).toEqual(["everything", "echo", { message: "from python" }]);
  const results = events.filter((e) => e.type === "tool_result" && e.toolName === "mcp_call");
  expect(results[0]?.output).toBe("Echo: from python");
  expect(JSON.stringify(events)).not.toContain("never-in-python-5a1");
});
