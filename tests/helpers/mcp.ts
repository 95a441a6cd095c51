/**
 * MCP servers for tests: the npm reference servers bundled into one file each (so they run in a user's
 * sandbox, where only the workspace and the system are visible: "installed" there like a user would),
 * the hostile fixture server, and server-everything over Streamable HTTP on a loopback port.
 */
import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { postJson, REPO_ROOT, type TestApp } from "./app.ts";
import { waitFor } from "./wait.ts";

const bundles = new Map<string, Promise<string>>();
let bundleDir: string | undefined;

/** One reference server bundled to a single ESM file for node (cached per test file). */
export function bundled(pkg: "server-everything" | "server-filesystem"): Promise<string> {
  let found = bundles.get(pkg);
  if (!found) {
    bundleDir ??= mkdtempSync(join(tmpdir(), "atrium-mcp-bundles-"));
    const dir = bundleDir;
    found = Bun.build({
      entrypoints: [join(REPO_ROOT, "node_modules/@modelcontextprotocol", pkg, "dist/index.js")],
      target: "node",
      outdir: join(dir, pkg),
      naming: "index.mjs",
    }).then((result) => {
      if (!result.success) throw new Error(`bundling ${pkg} failed: ${result.logs.join("\n")}`);
      return join(dir, pkg, "index.mjs");
    });
    bundles.set(pkg, found);
  }
  return found;
}

export const HOSTILE_SERVER = join(REPO_ROOT, "tests/fixtures/mcp/hostile-server.mjs");

/** Copies `file` into the owner's workspace as `name` (before their sandbox starts: it is handed over then). */
export function installInWorkspace(dataDir: string, owner: string, file: string, name: string): void {
  const workspace = ownerFolders(dataDir, owner).workspace;
  mkdirSync(workspace, { recursive: true });
  copyFileSync(file, join(workspace, name));
}

/** A loopback port free now (for a server whose URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** server-everything's Streamable HTTP transport on a loopback port; `url` is its /mcp endpoint. */
export async function everythingOverHttp(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const proc: Subprocess = Bun.spawn(
    [
      "node",
      join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
      "streamableHttp",
    ],
    { env: { PATH: process.env.PATH ?? "", PORT: String(port) }, stdout: "ignore", stderr: "ignore" },
  );
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitFor(
    async () => {
      try {
        await fetch(url, { method: "GET" });
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 20_000, intervalMs: 50, what: "server-everything to listen" },
  );
  return { url, stop: () => proc.kill("SIGKILL") };
}

/** Adds HTTP MCP servers at `url` (local mode), each `[name, approval]`; a refusal fails the test. */
export async function addHttpServers(
  t: TestApp,
  url: string,
  servers: [string, "ask" | "allow"][],
  extra: Record<string, unknown> = {},
): Promise<void> {
  for (const [name, approval] of servers) {
    const added = await t.json(
      "/api/chat/mcp-servers",
      postJson({ name, transport: "http", url, approval, ...extra }),
    );
    if (added.status !== 200)
      throw new Error(`adding ${name}: ${added.status} ${JSON.stringify(added.body)}`);
  }
}
