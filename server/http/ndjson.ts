/** NDJSON responses: `application/x-ndjson`, one JSON object per line, flushed per event. */
import { type Producer, type StreamOptions, streamResponse } from "./stream.ts";

export type NdjsonOptions<T> = Pick<StreamOptions<T>, "signal" | "onError" | "headers" | "status">;

export function ndjsonResponse<T>(produce: Producer<T>, options: NdjsonOptions<T> = {}): Response {
  return streamResponse(produce, {
    ...options,
    contentType: "application/x-ndjson",
    encode: (item) => `${JSON.stringify(item)}\n`,
  });
}
