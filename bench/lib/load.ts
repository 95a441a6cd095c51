/**
 * HTTP load generation. Uses wrk when it is installed (the better tool: C, keep-alive, no GC in the
 * measurement); otherwise a Bun client in its own process, so client and server never share a thread.
 */

/** A request other than a bare GET (the Bun client sends it; wrk is used for bare GETs only). */
export interface LoadRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  tool: "wrk" | "bun";
}

export function hasWrk(): boolean {
  return Bun.which("wrk") !== null;
}

export async function load(
  url: string,
  seconds: number,
  connections: number,
  request?: LoadRequest,
): Promise<LoadResult> {
  if (hasWrk() && !request) {
    const proc = Bun.spawn(["wrk", "-t1", `-c${connections}`, `-d${seconds}s`, url], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    const match = out.match(/Requests\/sec:\s+([\d.]+)/);
    if (!match?.[1]) throw new Error(`wrk printed no rate: ${out}`);
    return { requestsPerSecond: Number(match[1]), tool: "wrk" };
  }
  const args = [url, String(seconds), String(connections), JSON.stringify(request ?? {})];
  const proc = Bun.spawn([process.execPath, import.meta.path, ...args], { stdout: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return { requestsPerSecond: Number(JSON.parse(out).rps), tool: "bun" };
}

/** The fallback client: `bun bench/lib/load.ts URL SECONDS CONNECTIONS [REQUEST]` prints {"rps": N}. */
async function client(url: string, seconds: number, connections: number, request: LoadRequest) {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const response = await fetch(url, request);
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`${url} answered ${response.status}`);
        done++;
      }
    }),
  );
  console.log(JSON.stringify({ rps: done / seconds }));
}

if (import.meta.main) {
  const [url, seconds, connections, request] = process.argv.slice(2);
  await client(url ?? "", Number(seconds), Number(connections), JSON.parse(request ?? "{}") as LoadRequest);
}
