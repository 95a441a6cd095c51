/**
 * A request body read as JSON up to a byte cap, for routes that read their own body instead of
 * Elysia's parser (the MCP endpoint, the OpenAI-compatible endpoint): the declared length is checked
 * first, then the bytes as they arrive (a chunked body has none declared), and reading stops at the
 * cap. What a refusal looks like is the caller's (JSON-RPC's error, OpenAI's envelope), so this only
 * says which it is.
 */

export type CappedJson = { ok: true; value: unknown } | { ok: false; reason: "too_large" | "not_json" };

export async function readCappedJson(request: Request, max: number): Promise<CappedJson> {
  if (Number(request.headers.get("content-length") ?? 0) > max) return { ok: false, reason: "too_large" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        reader.cancel().catch(() => {});
        return { ok: false, reason: "too_large" };
      }
      chunks.push(value);
    }
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, reason: "not_json" };
  }
}
