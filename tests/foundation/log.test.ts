/** Logs are JSON lines, and no secret value reaches one. */
import { expect, test } from "bun:test";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig, secretValues } from "../../server/config/index.ts";
import { createLogger } from "../../server/log.ts";
import { secretVarNames } from "../../server/models/catalog.ts";
import { REPO_ROOT } from "../helpers/app.ts";

function capture(secrets: string[], level: "debug" | "info" = "info") {
  const lines: string[] = [];
  const log = createLogger({ level, secrets, sink: { write: (line) => lines.push(line) } });
  return { log, lines };
}

test("secret values are scrubbed wherever they appear: message, fields, nested, errors", () => {
  const { log, lines } = capture(["sk-live-abcdef123456", "tok-987654"]);
  log.error("calling with sk-live-abcdef123456", {
    headers: { authorization: "Bearer sk-live-abcdef123456" },
    error: new Error("401 for key tok-987654"),
    list: ["tok-987654"],
  });
  const text = lines.join("");
  expect(text).not.toContain("sk-live-abcdef123456");
  expect(text).not.toContain("tok-987654");
  const record = JSON.parse(lines[0] ?? "{}");
  expect(record).toMatchObject({
    level: "error",
    msg: "calling with [redacted]",
    headers: { authorization: "Bearer [redacted]" },
  });
  expect(record.error.message).toBe("401 for key [redacted]");
});

test("levels filter, child loggers carry their fields", () => {
  const { log, lines } = capture([]);
  log.debug("hidden");
  log.child({ family: "turns" }).info("shown", { runId: "r1" });
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
    level: "info",
    msg: "shown",
    family: "turns",
    runId: "r1",
  });
});

test("the server collects every secret it knows: policy variables, auth, desktop token, provider keys", () => {
  const env = createEnvSource({
    OPENAI_API_KEY: "sk-openai-111111",
    AWS_SECRET_ACCESS_KEY: "aws-secret-222222",
    APP_AUTH_SECRET: "auth-secret-333333",
    APP_DESKTOP_TOKEN: "desktop-444444",
    APP_MODEL_API_KEY: "model-555555",
    APP_ANALYTICS_TOKEN: "phc-666666",
    OLLAMA_BASE_URL: "http://127.0.0.1:11434",
  });
  const config = loadConfig(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir: "/tmp/x",
      policyPath: `${REPO_ROOT}/config/policy.toml`,
      allowNonLoopbackBind: false,
    },
    env,
  );
  const secrets = secretValues(config, env, secretVarNames());
  for (const value of [
    "sk-openai-111111",
    "aws-secret-222222",
    "auth-secret-333333",
    "desktop-444444",
    "model-555555",
    "phc-666666",
  ]) {
    expect(secrets).toContain(value);
  }
  // A base URL is not a credential.
  expect(secrets).not.toContain("http://127.0.0.1:11434");
});
