/**
 * Several Atrium instances behind the real load balancer, as docs/deploy.md "Several instances" runs
 * them: a fresh database of the run's PostgreSQL cluster (helpers/postgres.ts), instances `a` and `b`
 * as their own server processes (`bun server/main.ts`) on loopback ports fixed up front (so an instance
 * can be killed and restarted on its address), one data dir for both (the shared volume), and HAProxy
 * running the shipped `deploy/haproxy.cfg` unchanged, its addresses given through the environment.
 *
 * The balancer names the instance that answered in `X-Atrium-Instance`; `homeValueFor` finds an
 * `X-Atrium-Home` value (or `atrium_home` cookie) that pins requests to a chosen instance.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import { REPO_ROOT } from "./app.ts";
import { freePort } from "./mcp.ts";
import { freshPostgresDatabase } from "./postgres.ts";
import { type ServerProcess, startServerProcess, waitForOk } from "./server.ts";
import { tempDir } from "./tmp.ts";
import { waitFor } from "./wait.ts";

export const HAPROXY_CONFIG = join(REPO_ROOT, "deploy", "haproxy.cfg");
/** The secret every instance shares (its HMAC keys: server/auth/server-keys.ts). */
export const CLUSTER_SECRET = "cluster-secret-0123456789abcdef0123456789";

/** `a` and `b` sit behind the balancer; `c` is an extra instance on the same data (`Cluster.third`). */
export type InstanceName = "a" | "b" | "c";

export interface Instance {
  name: InstanceName;
  port: number;
  /** The instance's own URL (bypassing the balancer). */
  url: string;
  /** The running process, while it runs. */
  server?: ServerProcess;
  /** Starts it (again) on its port and waits until it is ready. */
  start(): Promise<void>;
  /** Sends `signal` (default SIGTERM) and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface Cluster {
  /** The balancer's URL: what clients use. */
  url: string;
  databaseUrl: string;
  dataDir: string;
  /** The environment every instance runs with. */
  env: Record<string, string>;
  instances: Record<"a" | "b", Instance>;
  /** Starts a third instance on the same database and data dir, not behind the balancer. */
  third(): Promise<Instance>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** More environment for the instances (the defaults: team server, open sign-up, CLUSTER_SECRET). */
  env?: Record<string, string>;
  /** More server flags. */
  args?: string[];
}

/** HAProxy from Debian (`apt-get install haproxy`: .ci/run installs it). */
export function haproxyPath(): string {
  const found = Bun.which("haproxy", { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` });
  if (!found) throw new Error("these tests need HAProxy on PATH (apt-get install haproxy)");
  return found;
}

/** The instance that answered, as the balancer names it. */
export function instanceOf(response: Response): string | null {
  return response.headers.get("x-atrium-instance");
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const databaseUrl = await freshPostgresDatabase();
  const data = tempDir("atrium-cluster-");
  const env = {
    APP_DATABASE_URL: databaseUrl,
    APP_AUTH_SECRET: CLUSTER_SECRET,
    APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
    APP_AUTH_SIGNUP: "open",
    ...options.env,
  };
  // The balancer's address is the origin clients use: every instance is told so (--public-origin).
  const balancerPort = await freePort();
  const url = `http://127.0.0.1:${balancerPort}`;
  const instance = async (name: InstanceName): Promise<Instance> => {
    const port = await freePort();
    const me: Instance = {
      name,
      port,
      url: `http://127.0.0.1:${port}`,
      async start() {
        me.server = await startServerProcess(
          [
            "--port",
            String(port),
            "--data-dir",
            data.path,
            "--trust-proxy",
            "loopback",
            "--public-origin",
            url,
            ...(options.args ?? []),
          ],
          // Each instance's own address, for the others to forward a user's requests to its home.
          { env: { ...env, APP_INSTANCE_URL: me.url } },
        );
        await waitForOk(`${me.url}/health/ready`, 60_000);
      },
      async stop(signal = "SIGTERM") {
        const server = me.server;
        me.server = undefined;
        if (!server) return;
        server.proc.kill(signal);
        await server.exited;
      },
    };
    return me;
  };
  const instances = { a: await instance("a"), b: await instance("b") };
  const extras: Instance[] = [];
  const third = async () => {
    const c = await instance("c");
    extras.push(c);
    await c.start();
    return c;
  };
  let balancer: Subprocess<"ignore", "ignore", "pipe"> | undefined;
  const stop = async () => {
    balancer?.kill("SIGTERM");
    await balancer?.exited;
    await Promise.all([...Object.values(instances), ...extras].map((i) => i.stop()));
    data.remove();
  };
  try {
    // One at a time: the first start runs the migrations, the second finds them applied.
    await instances.a.start();
    await instances.b.start();
    balancer = Bun.spawn([haproxyPath(), "-db", "-f", HAPROXY_CONFIG], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ATRIUM_LB_BIND: `127.0.0.1:${balancerPort}`,
        ATRIUM_A: `127.0.0.1:${instances.a.port}`,
        ATRIUM_B: `127.0.0.1:${instances.b.port}`,
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const errors = new Response(balancer.stderr).text();
    // Ready once both instances have answered through it.
    const seen = new Set<string>();
    await waitFor(
      async () => {
        if (balancer?.exitCode !== null) throw new Error(`haproxy exited: ${await errors}`);
        const response = await fetch(`${url}/api/health`).catch(() => undefined);
        await response?.arrayBuffer();
        const name = response?.ok ? instanceOf(response) : null;
        if (name) seen.add(name);
        return seen.size === 2;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "both instances to answer through the balancer" },
    );
    return { url, databaseUrl, dataDir: data.path, env, instances, third, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * An `X-Atrium-Home` value (also good as the `atrium_home` cookie) the balancer sends to `name`. The hash
 * maps values only onto instances the balancer sees up: after a restart, this waits for its health check.
 */
export async function homeValueFor(cluster: Cluster, name: InstanceName): Promise<string> {
  let found: string | undefined;
  await waitFor(
    async () => {
      for (let i = 0; i < 64 && !found; i++) {
        const value = `home-${i}`;
        const response = await fetch(`${cluster.url}/api/health`, { headers: { "x-atrium-home": value } });
        await response.arrayBuffer();
        if (instanceOf(response) === name) found = value;
      }
      return found !== undefined;
    },
    { timeoutMs: 20_000, intervalMs: 250, what: `a home value the balancer sends to instance ${name}` },
  );
  return found as string;
}
