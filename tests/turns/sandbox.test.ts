/**
 * The shared sandbox on its own: steps keep state, output is captured and truncated, tracebacks come
 * back, host tools are served through the pipe, a runaway step is killed at its time limit, and Python
 * reaches nothing of the host (environment, network, files) under bubblewrap.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SandboxKilled } from "../../server/sandbox/interpreter.ts";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { sandboxCommand } from "../../server/sandbox/isolation.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const pool = new InterpreterPool({ warm: 1 });
const dir = tempDir();
const CANARY = `canary-${crypto.randomUUID()}`;
let hits = 0;
let server: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  process.env.ATRIUM_TEST_CANARY = CANARY;
  writeFileSync(join(dir.path, "secret.txt"), CANARY);
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      hits++;
      return new Response(CANARY);
    },
  });
  await pool.warm();
});

afterAll(() => {
  delete process.env.ATRIUM_TEST_CANARY;
  pool.close();
  server.stop(true);
  dir.remove();
});

describe("sandbox", () => {
  test("the jail binds the checkout without dotfiles and without the folder holding the data dir", () => {
    const root = join(import.meta.dir, "..", "..");
    const args = sandboxCommand("bubblewrap", [join(root, "tests", "data")]);
    const bound = args.flatMap((arg, i) => (arg === "--ro-bind" ? [args[i + 2]] : []));
    expect(bound).toContain(join(root, "server"));
    expect(bound).not.toContain(join(root, "tests"));
    expect(bound.some((p) => p?.includes("/."))).toBe(false);
    expect(args).toContain("--clearenv");
    expect(args).toContain("--unshare-all");
  });

  test("steps share state, print the trailing expression, and report tracebacks", async () => {
    const py = await pool.acquire();
    try {
      await py.init([], { context: "the context text" }, 1000);
      const first = await py.run("x = 21\nprint(context)\nx * 2", { timeoutMs: 20_000 });
      expect(first.stdout).toBe("the context text\n42\n");
      expect(first.error).toBeNull();
      const second = await py.run("x + undefined_name", { timeoutMs: 20_000 });
      expect(second.error).toContain("NameError");
      const third = await py.run("for i in range(100_000):\n    print('y' * 50)", { timeoutMs: 20_000 });
      expect(third.truncated).toBe(true);
      expect(third.stdout.length).toBeLessThan(1100);
      const submitted = await py.run("SUBMIT(answer=x)\nprint('not reached')", { timeoutMs: 20_000 });
      expect(submitted).toMatchObject({ didSubmit: true, submitted: { answer: 21 }, stdout: "" });
    } finally {
      pool.release(py);
    }
  });

  test("host tools are served through the pipe", async () => {
    const py = await pool.acquire();
    try {
      await py.init(["llm_query"], {}, 1000);
      const calls: unknown[] = [];
      const result = await py.run("print(llm_query('hi') + '!')", {
        timeoutMs: 20_000,
        onToolCall: async (name, args) => {
          calls.push([name, ...args]);
          return "hello";
        },
      });
      expect(result.stdout).toBe("hello!\n");
      expect(calls).toEqual([["llm_query", "hi"]]);
      const failing = await py.run("llm_query('x')", {
        timeoutMs: 20_000,
        onToolCall: async () => {
          throw new Error("cap reached");
        },
      });
      expect(failing.error).toContain("RuntimeError: cap reached");
    } finally {
      pool.release(py);
    }
  }, 60_000);

  test("an infinite loop is killed at the step limit", async () => {
    const py = await pool.acquire();
    const error = await py.run("while True:\n    pass", { timeoutMs: 300 }).catch((e) => e);
    expect(error).toBeInstanceOf(SandboxKilled);
    expect((error as SandboxKilled).reason).toBe("timeout");
    await waitFor(() => !py.alive, { what: "the interpreter to be killed" });
    pool.release(py);
  });

  test("a sandbox that floods its pipe with an endless line is stopped", async () => {
    const py = await pool.acquire();
    const flood =
      'from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nF(\'const fs = process.getBuiltinModule("fs"); const x = "x".repeat(1 << 20); for (let i = 0; i < 40; i++) fs.writeSync(1, x)\')()';
    const error = await py.run(flood, { timeoutMs: 60_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(SandboxKilled);
    pool.release(py);
  }, 90_000);

  test("Python reaches nothing of the host", async () => {
    expect(pool.isolation).toBe("bubblewrap");
    const py = await pool.acquire();
    const port = server.port;
    const attempts = [
      "import os\nprint(dict(os.environ))",
      "import js\nprint(js.process.env)",
      "import js\nprint(js.fetch)",
      "from pyodide.code import run_js\nprint(run_js('JSON.stringify(process.env)'))",
      // Escaping pyodide through a JS function's constructor: real JS, but in an empty, jailed process.
      "from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nprint(F('return JSON.stringify(process.env)')())",
      `from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nprint(F('return process.getBuiltinModule("fs").readFileSync("${join(dir.path, "secret.txt")}", "utf8")')())`,
      `from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nprint(F('return process.getBuiltinModule("fs").readdirSync("/").join(",")')())`,
      `from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nprint(F('return process.getBuiltinModule("fs").readdirSync("${join(import.meta.dir, "..", "..")}").join(",")')())`,
      `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=2)\ns.send(b"GET / HTTP/1.0\\r\\n\\r\\n")\nprint(s.recv(100))`,
      `import urllib.request\nprint(urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=2).read())`,
      `open("${join(dir.path, "secret.txt")}").read()`,
      `from pyodide.ffi import to_js\nF = to_js({}).constructor.constructor\nF('return fetch("http://127.0.0.1:${port}/")')()`,
    ];
    const outputs: string[] = [];
    try {
      await py.init([], {}, 10_000);
      for (const code of attempts) {
        const result = await py.run(code, { timeoutMs: 20_000 });
        outputs.push(`${result.stdout}${result.stderr}${result.error ?? ""}`);
      }
    } finally {
      pool.release(py);
    }
    // Once the interpreter is gone nothing more can leave it; one request of our own through the same
    // server then comes after anything it sent.
    await waitFor(() => !py.alive, { what: "the interpreter to exit" });
    await fetch(`http://127.0.0.1:${server.port}/`);
    hits--;
    const all = outputs.join("\n");
    expect(all).not.toContain(CANARY);
    expect(all).not.toContain("ATRIUM_TEST_CANARY");
    expect(hits).toBe(0);
    // The attempts did run: the jail's root holds only the runtime's own folders.
    expect(outputs[6]).toContain("scratch");
    // The checkout is visible without its dotfiles (.env, .git).
    expect(outputs[7]).toContain("server");
    expect(outputs[7]).not.toContain(".git");
  });
});
