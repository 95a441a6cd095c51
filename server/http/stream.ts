/**
 * The streaming core under NDJSON and SSE (docs/design.md §7).
 *
 * A producer is an async iterable started with an AbortSignal. The response body pulls one item at a
 * time (highWaterMark 0), so a slow client slows the producer instead of growing a buffer
 * (backpressure); each item is enqueued as its own chunk, which Bun writes at once (flush per event).
 * While the producer is quiet for `heartbeatMs`, a heartbeat is written to keep proxies and clients from
 * timing out. Client disconnect (the body is cancelled, or the request signal aborts) and server shutdown
 * abort the signal and close the iterator, so the work behind the stream stops.
 */

export type Producer<T> = (signal: AbortSignal) => AsyncIterable<T>;

export interface StreamOptions<T> {
  contentType: string;
  encode: (item: T) => string;
  /** Aborts the stream: pass the request's signal (client disconnect) and the server's shutdown signal. */
  signal?: AbortSignal;
  heartbeatMs?: number;
  heartbeat?: string;
  /** Written once after the producer finishes (normally or through onError), e.g. `data: [DONE]`. */
  trailer?: string;
  /** Last items to send when the producer throws (e.g. an `error` event); the stream then ends. */
  onError?: (error: unknown) => T[];
  status?: number;
  headers?: Record<string, string>;
}

const HEARTBEAT = Symbol("heartbeat");
const ABORTED = Symbol("aborted");

export function streamResponse<T>(produce: Producer<T>, options: StreamOptions<T>): Response {
  const abort = new AbortController();
  const external = options.signal;
  const onExternalAbort = () => abort.abort(external?.reason);
  if (external?.aborted) abort.abort(external.reason);
  else external?.addEventListener("abort", onExternalAbort, { once: true });
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    if (abort.signal.aborted) resolve(ABORTED);
    else abort.signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
  });

  const encoder = new TextEncoder();
  const iterator = produce(abort.signal)[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<T>> | undefined;
  let finished = false;

  const finish = () => {
    if (finished) return;
    finished = true;
    external?.removeEventListener("abort", onExternalAbort);
    if (!abort.signal.aborted) abort.abort();
    iterator.return?.()?.catch(() => {});
  };

  const close = (controller: ReadableStreamDefaultController<Uint8Array>, last: string[] = []) => {
    if (finished) return; // cancelled by the client: nothing more can be written
    finish();
    for (const text of last) controller.enqueue(encoder.encode(text));
    if (options.trailer) controller.enqueue(encoder.encode(options.trailer));
    controller.close();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (finished) return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let next: IteratorResult<T> | typeof HEARTBEAT | typeof ABORTED;
        let text: string | undefined;
        try {
          pending ??= iterator.next();
          const contenders: Promise<typeof next>[] = [pending, aborted];
          if (options.heartbeatMs && options.heartbeat) {
            contenders.push(
              new Promise((resolve) => (timer = setTimeout(() => resolve(HEARTBEAT), options.heartbeatMs))),
            );
          }
          next = await Promise.race(contenders);
          if (next !== HEARTBEAT && next !== ABORTED) {
            pending = undefined;
            if (!next.done) text = options.encode(next.value);
          }
        } catch (error) {
          // The producer threw (or produced something that cannot be encoded): end with its last words.
          pending = undefined;
          const last = options.onError?.(error) ?? [];
          close(controller, last.map(options.encode));
          return;
        } finally {
          clearTimeout(timer);
        }
        if (next === HEARTBEAT) controller.enqueue(encoder.encode(options.heartbeat));
        else if (next === ABORTED) {
          // Shutdown or disconnect: end without the trailer (a cancelled body is already finished).
          if (!finished) {
            finish();
            controller.close();
          }
        } else if (text !== undefined) controller.enqueue(encoder.encode(text));
        else close(controller);
      },
      cancel() {
        finish();
      },
    },
    { highWaterMark: 0 },
  );

  return new Response(body, {
    status: options.status ?? 200,
    headers: {
      "content-type": options.contentType,
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      ...options.headers,
    },
  });
}
