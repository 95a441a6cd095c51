/**
 * The one stream reader (common/streams.ts) the web UI, the terminal client and the tests share: lines
 * split anywhere across chunks (even inside a UTF-8 character or between CR and LF), every line end the
 * SSE grammar allows, a last line without a newline, NDJSON values, SSE events (multi-line data, comments
 * and keep-alives, fields without a space or a colon), the line cap, and the connection closed when a
 * reader stops early.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { LineTooLongError, ndjson, type SseEvent, sseEvents, streamLines } from "../../common/streams.ts";

const encoder = new TextEncoder();

/** A body delivering these chunks one read at a time; `cancelled` resolves when the reader cancels it. */
function body(chunks: (string | Uint8Array)[]) {
  let cancelled = false;
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks[pulled++];
        if (next === undefined) controller.close();
        else controller.enqueue(typeof next === "string" ? encoder.encode(next) : next);
      },
      cancel() {
        cancelled = true;
      },
      // No read-ahead: a chunk is pulled only when the reader asks, so a test can count what was read.
    },
    { highWaterMark: 0 },
  );
  return { stream, cancelled: () => cancelled, pulled: () => pulled };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The bytes of a text cut at the given byte offsets. */
function cut(text: string, at: number[]): Uint8Array[] {
  const bytes = encoder.encode(text);
  const points = [...new Set(at.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    pieces.push(bytes.slice(from, point));
    from = point;
  }
  return pieces;
}

describe("lines", () => {
  test("a line split across chunks is read whole; the last line needs no newline", async () => {
    const lines = await all(streamLines(body(["hel", "lo\nwor", "ld\n", "\n", "tail"]).stream));
    expect(lines).toEqual(["hello", "world", "", "tail"]);
  });

  test("CRLF, a lone CR and a CR LF split between two chunks each end one line", async () => {
    const lines = await all(streamLines(body(["a\r\nb\rc\r", "\nd\r", "e\n"]).stream));
    expect(lines).toEqual(["a", "b", "c", "d", "e"]);
  });

  test("a UTF-8 character cut between chunks decodes whole", async () => {
    const bytes = encoder.encode("é€😀\n");
    const chunks = [...bytes].map((b) => new Uint8Array([b]));
    expect(await all(streamLines(body(chunks).stream))).toEqual(["é€😀"]);
  });

  test("any cutting of the bytes gives the same lines (property)", async () => {
    const line = fc.string({ unit: fc.constantFrom("a", "é", "😀", " ", ":", "{", "}") });
    const end = fc.constantFrom("\n", "\r\n", "\r");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(line, end), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (pairs, endLast, at) => {
          let text = "";
          pairs.forEach(([l, e], i) => {
            // A lone CR then an empty line ended by LF would read as one CRLF: that line ends in CRLF.
            const end = text.endsWith("\r") && l === "" && e === "\n" ? "\r\n" : e;
            text += i < pairs.length - 1 || endLast ? l + end : l;
          });
          const expected = pairs.map(([l]) => l);
          // A last line without its newline and without text is no line at all.
          if (!endLast && expected.at(-1) === "") expected.pop();
          expect(await all(streamLines(body(cut(text, at)).stream))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a long line read in many small chunks arrives whole", async () => {
    const long = "x".repeat(4 * 1024 * 1024);
    const chunks: string[] = [];
    for (let i = 0; i < long.length; i += 4096) chunks.push(long.slice(i, i + 4096));
    const [line, next] = await all(streamLines(body([...chunks, "\nafter"]).stream));
    expect(line?.length).toBe(long.length);
    expect(next).toBe("after");
  });
});

describe("the line cap", () => {
  test("a line longer than the cap throws and closes the body, even one that never ends", async () => {
    const endless = body(["12345", "67890", "12345", "67890"]);
    const reading = all(streamLines(endless.stream, { maxLine: 8 }));
    await expect(reading).rejects.toBeInstanceOf(LineTooLongError);
    expect(endless.cancelled()).toBe(true);
    // It stopped at the chunk that crossed the cap, not at the end of the body.
    expect(endless.pulled()).toBe(2);
  });

  test("a finished line over the cap throws; lines up to the cap are read", async () => {
    const exact = await all(streamLines(body(["12345678\nshort\n"]).stream, { maxLine: 8 }));
    expect(exact).toEqual(["12345678", "short"]);
    await expect(all(streamLines(body(["ok\n123456789\n"]).stream, { maxLine: 8 }))).rejects.toThrow(
      "longer than 8 characters",
    );
  });

  test("NDJSON and SSE readers keep the cap", async () => {
    await expect(
      all(ndjson(body([`{"a":"${"x".repeat(20)}"}\n`]).stream, { maxLine: 10 })),
    ).rejects.toBeInstanceOf(LineTooLongError);
    await expect(
      all(sseEvents(body([`data: ${"x".repeat(20)}\n\n`]).stream, { maxLine: 10 })),
    ).rejects.toBeInstanceOf(LineTooLongError);
  });
});

describe("NDJSON", () => {
  test("one value a line, split anywhere, blank and CRLF lines tolerated, last line unterminated", async () => {
    const values = await all(ndjson(body(['{"type":"st', 'art"}\r\n\r\n  \n{"n":', "2}\n[1,2]"]).stream));
    expect(values).toEqual([{ type: "start" }, { n: 2 }, [1, 2]]);
  });

  test("a line that is not JSON throws", async () => {
    await expect(all(ndjson(body(['{"ok":true}\n{"cut', "\n"]).stream))).rejects.toBeInstanceOf(SyntaxError);
  });

  test("leaving early cancels the body (the connection closes)", async () => {
    const source = body(['{"n":1}\n', '{"n":2}\n', '{"n":3}\n']);
    for await (const value of ndjson<{ n: number }>(source.stream)) if (value.n === 1) break;
    expect(source.cancelled()).toBe(true);
  });
});

describe("SSE", () => {
  const events = (...chunks: string[]): Promise<SseEvent[]> => all(sseEvents(body(chunks).stream));

  test("named events, data joined across lines, ids, and unnamed events", async () => {
    expect(
      await events(
        'event: turn_start\ndata: {"type":"turn_start"}\n\n',
        "id: 7\nevent: text\ndata: two\ndata: lines\n\n",
        "data: [DONE]\n\n",
      ),
    ).toEqual([
      { event: "turn_start", data: '{"type":"turn_start"}' },
      { id: "7", event: "text", data: "two\nlines" },
      { data: "[DONE]" },
    ]);
  });

  test("comments and keep-alives are skipped, events without data dropped, fields split anywhere", async () => {
    expect(
      await events(": keep-alive\n\n", "event: ping\n\n", "ev", "ent: a\nda", "ta: 1\r\n", "\r\n", ":x\n\n"),
    ).toEqual([{ event: "a", data: "1" }]);
  });

  test("the grammar's corners: no space after the colon, one space dropped, a bare field, retry ignored", async () => {
    expect(await events("data:x\ndata:  two spaces\ndata\nretry: 10\nfoo: bar\n\n")).toEqual([
      { data: "x\n two spaces\n" },
    ]);
  });

  test("an event left open when the body ends is delivered; fields never leak into the next event", async () => {
    expect(await events("event: a\nid: 1\ndata: 1\n\ndata: 2")).toEqual([
      { event: "a", id: "1", data: "1" },
      { data: "2" },
    ]);
  });
});
