/**
 * Where `atrium login` keeps session tokens: one JSON file in the user's config folder
 * (`$XDG_CONFIG_HOME/atrium/credentials.json`, else `~/.config/atrium/credentials.json`), one token per
 * server base URL, readable by its owner only (0600, in a 0700 folder). `APP_TOKEN` overrides it.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

type Env = Record<string, string | undefined>;

interface SavedServer {
  token: string;
  email?: string;
  savedAt: string;
}

interface CredentialsFile {
  servers: Record<string, SavedServer>;
}

export function credentialsPath(env: Env = process.env): string {
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(config, "atrium", "credentials.json");
}

function readAll(env: Env): CredentialsFile {
  const path = credentialsPath(env);
  if (!existsSync(path)) return { servers: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<CredentialsFile>;
    return { servers: parsed.servers && typeof parsed.servers === "object" ? parsed.servers : {} };
  } catch {
    return { servers: {} };
  }
}

/** The saved session token for this server, if `atrium login` saved one. */
export function credentialFor(baseUrl: string, env: Env = process.env): string | undefined {
  const token = readAll(env).servers[baseUrl]?.token;
  return typeof token === "string" && token ? token : undefined;
}

/** Saves (or, with `undefined`, forgets) this server's token; the file is written 0600 and swapped in. */
export function saveCredential(baseUrl: string, saved: SavedServer | undefined, env: Env = process.env) {
  const path = credentialsPath(env);
  const all = readAll(env);
  if (saved) all.servers[baseUrl] = saved;
  else delete all.servers[baseUrl];
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
