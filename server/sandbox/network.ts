/**
 * Egress for a jailed process (policy `sandbox.network = "egress"`, the local-mode shell only): the jail
 * still gets its own network namespace, and `pasta` (Debian's passt package) attaches to it and carries
 * its traffic through ordinary sockets on the host. The host stays out of reach: no port of the host is
 * forwarded in either direction (`-t/-u/-T/-U none`), the gateway address is not mapped to the host
 * (`--no-map-gw`), and the namespace's loopback is its own, so the server's port on 127.0.0.1 cannot be
 * reached. (A server bound to a non-loopback address is reachable at that address like from any other
 * machine on the network; the Host/Origin rules of the HTTP layer apply to it as to them.)
 *
 * bubblewrap writes the jail's pid on its info fd and waits on its block fd; pasta is attached to that
 * pid's network namespace before the command is let go, so the command never runs without its network.
 * Where pasta cannot attach (not installed; a host whose /dev/net/tun only root may open, for a server
 * that is not root) the command runs with no network at all and its output says so: egress fails closed.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

let pastaPath: string | null | undefined;

export function findPasta(): string | undefined {
  if (pastaPath === undefined) pastaPath = Bun.which("pasta") ?? null;
  return pastaPath ?? undefined;
}

/** Reads bubblewrap's `--info-fd` JSON up to its end and returns the jail's pid (polls: the fd does not block). */
export async function readJailPid(fd: number): Promise<number | undefined> {
  const chunk = Buffer.alloc(4096);
  let text = "";
  for (let waited = 0; waited < 10_000; ) {
    let n = 0;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return undefined;
      await Bun.sleep(5);
      waited += 5;
      continue;
    }
    if (n === 0) return undefined;
    text += chunk.toString("utf8", 0, n);
    const pid = /"child-pid"\s*:\s*(\d+)/.exec(text);
    if (pid && text.includes("}")) return Number(pid[1]);
  }
  return undefined;
}

/** Starts pasta on the network namespace of `pid`; resolves once the namespace is configured. */
export async function attachPasta(pid: number): Promise<Bun.Subprocess> {
  const pasta = findPasta();
  if (!pasta) throw new Error("pasta is not installed");
  const root = process.getuid?.() === 0;
  await loopbackUp(pid);
  // pasta drops root to "nobody" and then cannot open the namespace; as root it stays root (it drops its
  // capabilities and isolates itself once set up). It opens the namespace after dropping them, which
  // fails for a jail running as a real unprivileged uid: the server opens it and hands pasta the fd.
  // Not root, pasta joins the jail's user namespace.
  const netns = root ? openSync(`/proc/${pid}/ns/net`, "r") : undefined;
  const target = [netns === undefined ? `/proc/${pid}/ns/net` : "/proc/self/fd/3"];
  const who = root ? ["--runas", "0", "--netns-only"] : ["--userns", `/proc/${pid}/ns/user`];
  const proc = Bun.spawn(
    [
      pasta,
      ...who,
      "--config-net",
      "--foreground",
      "--quiet",
      "-t",
      "none",
      "-u",
      "none",
      "-T",
      "none",
      "-U",
      "none",
      "--no-map-gw",
      "--netns",
      ...target,
    ],
    {
      env: {},
      stdio: netns === undefined ? ["ignore", "ignore", "ignore"] : ["ignore", "ignore", "ignore", netns],
    },
  );
  if (netns !== undefined) closeSync(netns);
  // pasta configures the interface before it starts forwarding; wait until the namespace has a route.
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error("pasta could not attach to the jail's network");
    if (hasDefaultRoute(pid)) return proc;
    await Bun.sleep(10);
  }
  proc.kill("SIGKILL");
  throw new Error("pasta did not configure the jail's network in time");
}

/**
 * Waits (briefly) until bubblewrap has set up the namespace's loopback: it does so in the jail right
 * after writing the pid on its info fd, and pasta configuring the same namespace at that moment made
 * bubblewrap die with "loopback: Failed RTM_NEWADDR" (seen once under load). The loopback's broadcast
 * route exists only once its address is added and the link is up, which is bubblewrap's last step there.
 */
async function loopbackUp(pid: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    try {
      if (readFileSync(`/proc/${pid}/net/fib_trie`, "utf8").includes("127.255.255.255")) return;
    } catch {
      return; // the jail is gone: attaching fails below with its own message
    }
    await Bun.sleep(5);
  }
}

function hasDefaultRoute(pid: number): boolean {
  try {
    const routes = readFileSync(`/proc/${pid}/net/route`, "utf8");
    return routes.split("\n").some((line) => line.split("\t")[1] === "00000000");
  } catch {
    return false;
  }
}

/** Lets the blocked jail go on (bubblewrap's `--block-fd`). */
export function release(fd: number): void {
  try {
    writeSync(fd, "1");
  } catch {}
}
