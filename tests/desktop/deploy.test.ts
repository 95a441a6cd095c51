/** The headless deploy examples stay true to the server: the unit's command line and the env file's names. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCli } from "../../server/config/cli.ts";
import { isLoopback } from "../../server/http/client.ts";
import { REPO_ROOT } from "../helpers/app.ts";

const read = (file: string) => readFileSync(join(REPO_ROOT, "deploy", file), "utf8");

test("the systemd unit runs the binary with flags the CLI accepts, on loopback, stopped by SIGTERM", () => {
  const unit = read("atrium.service");
  const execStart = unit.match(/^ExecStart=(.+)$/m)?.[1]?.split(/\s+/) ?? [];
  expect(execStart[0]).toBe("/opt/atrium/atrium");
  const cli = parseCli(execStart.slice(1), {}, "/var/lib/atrium");
  expect(cli).toMatchObject({ kind: "serve", options: { port: 8000, dataDir: "/var/lib/atrium" } });
  if (cli.kind === "serve") expect(isLoopback(cli.options.host)).toBe(true);
  expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
  expect(unit).toMatch(/^EnvironmentFile=\/etc\/atrium\/atrium\.env$/m);
  // bubblewrap needs user namespaces.
  expect(unit).not.toMatch(/^(RestrictNamespaces|PrivateUsers)=/m);
});

test("every variable the env example sets is one the server documents", () => {
  const names = [...read("atrium.env.example").matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map(
    (m) => m[1] as string,
  );
  expect(names).toContain("APP_CHAT_RUNTIME_REQUIRE_AUTH");
  const help = parseCli(["--help"], {}, "/");
  if (help.kind !== "help") throw new Error("no help text");
  for (const name of names)
    expect({ name, documented: help.text.includes(name) }).toEqual({ name, documented: true });
});
