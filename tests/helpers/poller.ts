/**
 * A separate client that polls a URL (a server's `/health`) in a process of its own, so a server whose
 * event loop is stuck cannot stall the client too: each poll waits at most `timeoutMs`, the next starts
 * `intervalMs` after it ends, and every poll is reported with its wall-clock start and end (the same
 * clock the test reads with Date.now()). Nothing here judges speed: a poll either got its answer within
 * the generous per-poll limit or it did not.
 */

export interface Poll {
  start: number;
  end: number;
  /** "ok", "status <n>", or "failed <error name>" (TimeoutError when the limit passed). */
  outcome: string;
}

const SCRIPT = `
const url = process.env.POLL_URL;
const interval = Number(process.env.POLL_INTERVAL_MS);
const timeout = Number(process.env.POLL_TIMEOUT_MS);
let stop = false;
process.stdin.on("end", () => { stop = true; });
process.stdin.resume();
while (!stop) {
  const start = Date.now();
  let outcome;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeout) });
    await response.arrayBuffer();
    outcome = response.ok ? "ok" : "status " + response.status;
  } catch (error) {
    outcome = "failed " + (error && error.name);
  }
  process.stdout.write(JSON.stringify({ start, end: Date.now(), outcome }) + "\\n");
  await Bun.sleep(interval);
}
process.exit(0);
`;

export interface Poller {
  /** Resolves once the first poll has been answered (the client is running). */
  started: Promise<void>;
  /** Ends the polling after the poll in progress; every poll made. */
  stop(): Promise<Poll[]>;
}

export function pollUrl(url: string, { intervalMs = 100, timeoutMs = 2000 } = {}): Poller {
  const proc = Bun.spawn([process.execPath, "-e", SCRIPT], {
    env: {
      POLL_URL: url,
      POLL_INTERVAL_MS: String(intervalMs),
      POLL_TIMEOUT_MS: String(timeoutMs),
    },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const polls: Poll[] = [];
  let first: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    first = resolve;
  });
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let at = buffer.indexOf("\n");
      while (at !== -1) {
        polls.push(JSON.parse(buffer.slice(0, at)) as Poll);
        buffer = buffer.slice(at + 1);
        first();
        at = buffer.indexOf("\n");
      }
    }
  })();
  return {
    started,
    async stop() {
      proc.stdin.end();
      await proc.exited;
      await reading;
      return polls;
    },
  };
}
