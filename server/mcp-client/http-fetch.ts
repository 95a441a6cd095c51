/**
 * The fetch the SDK's Streamable HTTP transport is given: every request goes through the server's one
 * outbound rule (server/http/outbound/), judged for whoever named the URL (a user's server: no loopback
 * or private address on a team server unless APP_OUTBOUND_ALLOW names its origin; the operator's: any),
 * pinned to the checked address, redirects refused. Each response body is cut off past `maxBytes`, so a
 * hostile server cannot fill the server's memory with one answer.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Connector } from "../http/outbound/connect.ts";
import { outboundFetch } from "../http/outbound/fetch.ts";
import type { Namer, OutboundRule } from "../http/outbound/rule.ts";

export interface OutboundFetchOptions {
  rule: OutboundRule;
  namedBy: Namer;
  /** Largest response body read; past it the stream errors. */
  maxBytes: number;
  connect?: Connector;
}

export function outboundFetchLike(options: OutboundFetchOptions): FetchLike {
  return async (input, init) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = init?.body == null ? undefined : await new Response(init.body).text();
    const signal = init?.signal ?? new AbortController().signal;
    const { response } = await outboundFetch(String(input), {
      rule: options.rule,
      namedBy: options.namedBy,
      request: { method: init?.method ?? "GET", headers, ...(body === undefined ? {} : { body }) },
      signal,
      ...(options.connect ? { connect: options.connect } : {}),
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one);
    }
    const empty = response.status === 204 || response.status === 304 || init?.method === "HEAD";
    if (empty) response.cancel();
    return new Response(empty ? null : bounded(response.body, options.maxBytes, response.cancel), {
      status: response.status,
      headers: responseHeaders,
    });
  };
}

function bounded(body: AsyncIterable<Uint8Array>, maxBytes: number, cancel: () => void) {
  const iterator = body[Symbol.asyncIterator]();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) return controller.close();
        size += next.value.length;
        if (size > maxBytes) {
          cancel();
          return controller.error(new Error(`the MCP server's response exceeded ${maxBytes} bytes`));
        }
        controller.enqueue(next.value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel,
  });
}
