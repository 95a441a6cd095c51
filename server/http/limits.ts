/**
 * Request size limit. A body whose declared length exceeds the limit is refused with 413 before it is
 * read; Bun.serve's `maxRequestBodySize` (set to the same limit when listening) stops chunked bodies that
 * grow past it.
 */
import { Elysia } from "elysia";
import { AppError } from "./errors.ts";

export function bodyLimit(maxBytes: number) {
  return new Elysia({ name: "atrium/body-limit" }).onRequest(({ request }) => {
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBytes) {
      throw new AppError("too_large", `Request body is larger than the limit of ${maxBytes} bytes`);
    }
  });
}
