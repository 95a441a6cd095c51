/**
 * Forwards a request to the user's home instance and streams its answer back (NDJSON and SSE chunks
 * pass through as they come). The target is an instance's registered origin (instances.ts), never an
 * address taken from the request. What goes out is the caller's own request, minus the hop-by-hop
 * headers, plus one marker naming this instance: no server secret, key or credential of this instance
 * is added, and the home instance authenticates the caller again from the request itself.
 */
import { HOP_BY_HOP } from "../../http/hop-by-hop.ts";

/** Marks a forwarded request: the receiver never forwards it again (one hop at most). */
export const FORWARDED_HEADER = "x-atrium-forwarded-by";

/** Hop-by-hop headers, and Host and Content-Length (the target's and the new body's). */
const DROPPED = [...HOP_BY_HOP, "host", "content-length"];

function withoutHopByHop(source: Headers): Headers {
  const headers = new Headers(source);
  for (const name of source.get("connection")?.split(",") ?? []) headers.delete(name.trim());
  for (const name of DROPPED) headers.delete(name);
  return headers;
}

/**
 * The home instance's answer to `request`, or undefined when it could not be reached (nothing was
 * sent: the caller may take the home over once its lease lapses).
 */
export async function forwardHome(
  request: Request,
  origin: string,
  instance: string,
): Promise<Response | undefined> {
  const source = new URL(request.url);
  const target = new URL(`${source.pathname}${source.search}`, origin);
  // The target must stay the registered origin whatever the path holds (`//host/...` would change it).
  if (target.origin !== origin) return undefined;
  const headers = withoutHopByHop(request.headers);
  headers.set(FORWARDED_HEADER, instance);
  // Chat bodies are small and bounded by the body limit: read from a copy, so that when the home cannot
  // be reached the request is still whole for this instance to serve once it took the home over.
  const body =
    request.method === "GET" || request.method === "HEAD" ? undefined : await request.clone().arrayBuffer();
  let answer: Response;
  try {
    answer = await fetch(target, {
      method: request.method,
      headers,
      body,
      redirect: "manual",
      signal: request.signal,
      // The answer's bytes pass through as they are (an encoded body keeps its Content-Encoding).
      decompress: false,
    } as RequestInit);
  } catch (error) {
    if (request.signal.aborted) throw error;
    return undefined;
  }
  const headersOut = withoutHopByHop(answer.headers);
  return new Response(answer.body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: headersOut,
  });
}
