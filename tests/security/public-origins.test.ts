/**
 * Public origins (`--public-origin URL`, repeatable, and `APP_PUBLIC_ORIGINS`): how they are read and
 * checked at startup, and a real server process answering under them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { ConfigError, loadConfig } from "../../server/config/index.ts";
import { parsePublicOrigin, publicOriginsFrom } from "../../server/config/public-origins.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { spawn, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

describe("reading them", () => {
  test("each value becomes its canonical origin", () => {
    expect(parsePublicOrigin("https://Atrium.Example.com")).toBe("https://atrium.example.com");
    expect(parsePublicOrigin("https://atrium.example.com/")).toBe("https://atrium.example.com");
    expect(parsePublicOrigin("https://atrium.example.com:443")).toBe("https://atrium.example.com");
    expect(parsePublicOrigin(" http://10.0.0.5:8000 ")).toBe("http://10.0.0.5:8000");
    expect(parsePublicOrigin("http://[fd00::5]:8000")).toBe("http://[fd00::5]:8000");
  });

  test("anything but a bare http(s) origin is refused, naming the value", () => {
    for (const bad of [
      "atrium.example.com",
      "ftp://atrium.example.com",
      "https://atrium.example.com/app",
      "https://atrium.example.com?x=1",
      "https://atrium.example.com#top",
      "https://user:pw@atrium.example.com",
      "null",
      "*",
    ]) {
      expect(() => parsePublicOrigin(bad)).toThrow(bad);
    }
  });

  test("flags and the variable add up, without duplicates", () => {
    expect(
      publicOriginsFrom(["https://a.example"], "https://b.example, https://A.example,,http://c.example:8080"),
    ).toEqual(["https://a.example", "https://b.example", "http://c.example:8080"]);
    expect(publicOriginsFrom([], undefined)).toEqual([]);
  });

  test("the config carries them; a bad one stops startup with one clear line", () => {
    const cli = parseCli(
      ["--public-origin", "https://a.example", "--data-dir", dir.path, "--port", "0"],
      {},
      REPO_ROOT,
    );
    if (cli.kind !== "serve") throw new Error("expected serve");
    const config = loadConfig(cli.options, createEnvSource({ APP_PUBLIC_ORIGINS: "https://b.example" }));
    expect(config.publicOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(() => loadConfig(cli.options, createEnvSource({ APP_PUBLIC_ORIGINS: "b.example" }))).toThrow(
      ConfigError,
    );
  });
});

describe("a server process", () => {
  test("answers under its public origins from the flag and the variable, and nothing else", async () => {
    const server = await startServerProcess(
      ["--port", "0", "--data-dir", join(dir.path, "run"), "--public-origin", "http://atrium.test"],
      { env: { APP_PUBLIC_ORIGINS: "https://second.test" } },
    );
    try {
      await waitForOk(`${server.url}/health/ready`);
      const get = (host: string) => fetch(`${server.url}/v1/agents`, { headers: { host } });
      expect((await get("atrium.test")).status).toBe(200);
      expect((await get("second.test")).status).toBe(200);
      expect((await get("third.test")).status).toBe(421);
      const created = await fetch(`${server.url}/v1/agents`, {
        method: "POST",
        headers: { host: "atrium.test", origin: "http://atrium.test", "content-type": "application/json" },
        body: JSON.stringify({ name: "a", role: "r", type: "CUSTOM" }),
      });
      expect(created.status).toBe(200);
      const foreign = await fetch(`${server.url}/v1/agents`, {
        method: "POST",
        headers: { host: "atrium.test", origin: "http://third.test", "content-type": "application/json" },
        body: JSON.stringify({ name: "b", role: "r", type: "CUSTOM" }),
      });
      expect(foreign.status).toBe(403);
    } finally {
      server.proc.kill("SIGTERM");
      await server.exited;
    }
  });

  test("a bad --public-origin exits non-zero with one line naming it", async () => {
    const proc = spawn([
      "--port",
      "0",
      "--data-dir",
      join(dir.path, "bad"),
      "--public-origin",
      "atrium.test/app",
    ]);
    expect(await proc.exited).not.toBe(0);
    const stderr = (await new Response(proc.stderr).text()).trim();
    expect(stderr.split("\n")).toHaveLength(1);
    expect(stderr).toContain("atrium.test/app");
  });
});
