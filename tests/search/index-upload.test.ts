/**
 * `POST /search/index/upload`: files as multipart, read on the server like the `index` command reads
 * them (a real PDF's text, HTML stripped, Markdown), unknown types listed as skipped with the reason, the
 * same SSE as the JSON route; text in Latin-1, Windows-1252 or UTF-16 read as its letters; a file over the upload limit and a request over the body limit are 413; a
 * foreign page's Origin is refused; preflight-free types other than multipart are 415; the route is in OpenAPI.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readFrames } from "../helpers/streams.ts";
import { minimalPdf } from "./pdf-fixture.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function form(name: string, files: File[]): FormData {
  const data = new FormData();
  data.set("name", name);
  for (const file of files) data.append("files", file);
  return data;
}
const upload = (body: FormData, headers: Record<string, string> = {}) =>
  t.request("/search/index/upload", { method: "POST", body, headers });

const pdf = new File(
  [
    minimalPdf([
      "Ada Lovelace wrote the first program for the Analytical Engine.",
      "Babbage built it.",
    ]) as Uint8Array<ArrayBuffer>,
  ],
  "engine.pdf",
  { type: "application/pdf" },
);

test("a PDF, HTML and Markdown are read on the server; other types are skipped with the reason", async () => {
  const response = await upload(
    form("uploads", [
      pdf,
      new File(
        ["<html><body><h1>Grace Hopper</h1><script>evil()</script><p>wrote COBOL.</p></body></html>"],
        "hopper.html",
      ),
      new File(["# Notes\n\nAlan Turing met Alonzo Church at Princeton."], "notes.md"),
      new File([new Uint8Array([1, 2, 3, 0, 4])], "photo.png", { type: "image/png" }),
      new File(["%PDF-1.4 not really"], "broken.pdf"),
    ]),
  );
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/event-stream");
  const frames = await readFrames(response);
  expect(frames.some((f) => f.event === "progress")).toBe(true);
  const last = frames.at(-1);
  expect(last?.event).toBe("done");
  const summary = JSON.parse(last?.data ?? "{}");
  expect(summary).toMatchObject({ index: "uploads", documents: 3, documents_indexed: 3 });
  expect(summary.skipped).toEqual([
    { path: "photo.png", reason: "unsupported file type (.png)" },
    { path: "broken.pdf", reason: expect.stringMatching(/^unreadable PDF/) },
  ]);
  expect(summary.warnings).toContain("photo.png: skipped, unsupported file type (.png)");

  // The PDF's text is searchable, and the HTML's script never became text.
  const answer = await t.json<{ response: string; context_data: { sources: { text: string }[] } }>(
    "/search/local",
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: "Who wrote the first program for the Analytical Engine?",
        index: "uploads",
      }),
    },
  );
  expect(answer.status).toBe(200);
  const sources = JSON.stringify(answer.body.context_data);
  expect(sources).toContain("Analytical Engine");
  expect(sources).not.toContain("evil()");
});

/** A string's bytes in Windows-1252 (Latin-1 and the curly quotes), as an older text file holds them. */
function windows1252(text: string): Uint8Array<ArrayBuffer> {
  const curly: Record<string, number> = { "\u201c": 0x93, "\u201d": 0x94, "\u2019": 0x92 };
  return new Uint8Array([...text].map((c) => curly[c] ?? (c.charCodeAt(0) < 256 ? c.charCodeAt(0) : 0x3f)));
}
/** UTF-16 little-endian with its byte-order mark, as Windows Notepad saves "Unicode". */
function utf16le(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(2 + 2 * text.length);
  bytes.set([0xff, 0xfe]);
  for (let i = 0; i < text.length; i++)
    new DataView(bytes.buffer).setUint16(2 + 2 * i, text.charCodeAt(i), true);
  return bytes;
}

test("text saved as Latin-1, Windows-1252 or UTF-16 is read as its text; bytes that are no text are skipped", async () => {
  const response = await upload(
    form("encodings", [
      new File([windows1252("“Hélène Dubois,” said the clerk, “lived in Genève.”")], "gutenberg-8.txt"),
      new File([windows1252("<p>Zoë Martín wrote about Málaga’s harbour.</p>")], "page.html"),
      new File([utf16le("# Notes\n\nGrete Müller sailed from Lübeck.")], "notepad.md"),
      new File([new Uint8Array([0x41, 0x81, 0xc3, 0x28, 0x1b, 0x42])], "garbled.txt"),
      new File([new Uint8Array([0xff, 0xfe, 0x41])], "odd.txt"),
    ]),
  );
  expect(response.status).toBe(200);
  const summary = JSON.parse((await readFrames(response)).at(-1)?.data ?? "{}");
  expect(summary).toMatchObject({ index: "encodings", documents: 3, documents_indexed: 3 });
  expect(summary.skipped).toEqual([
    { path: "garbled.txt", reason: "not valid UTF-8 or Windows-1252 text" },
    { path: "odd.txt", reason: "not valid UTF-16 text" },
  ]);
  const ask = async (query: string) => {
    const { status, body } = await t.json<{ context_data: unknown }>("/search/local", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, index: "encodings" }),
    });
    expect(status).toBe(200);
    return JSON.stringify(body.context_data);
  };
  // Each file's letters, quotes included, as written: no replacement characters, no mojibake.
  expect(await ask("Where did Hélène Dubois live?")).toContain(
    "“Hélène Dubois,” said the clerk, “lived in Genève.”",
  );
  expect(await ask("What did Zoë Martín write about?")).toContain("Zoë Martín wrote about Málaga’s harbour.");
  expect(await ask("Where did Grete Müller sail from?")).toContain("Grete Müller sailed from Lübeck.");
});

test("no readable file is 422 with every reason; a file name's folders are dropped", async () => {
  const response = await t.json<{ detail: string }>("/search/index/upload", {
    method: "POST",
    body: form("none", [new File(["x"], "../../etc/a.exe")]),
  });
  expect(response.status).toBe(422);
  expect(response.body.detail).toBe("No file could be indexed: a.exe (unsupported file type (.exe))");
});

test("a file over storage.max_upload_bytes is 413 naming it; a request over the body limit is 413", async () => {
  const limit = t.ctx.config.policy.settings.storage.max_upload_bytes;
  const big = new File([new Uint8Array(limit + 1).fill(65)], "big.txt");
  const one = await t.json<{ detail: string }>("/search/index/upload", {
    method: "POST",
    body: form("big", [big]),
  });
  expect(one.status).toBe(413);
  expect(one.body.detail).toBe(`big.txt is ${limit + 1} bytes; a file may have at most ${limit} bytes`);
  // The body limit is the transport's: on a listening server, before the body is read.
  const server = listen(t);
  try {
    const total = new FormData();
    for (let i = 0; i < 2; i++)
      total.append("files", new File([new Uint8Array(limit).fill(65)], `part${i}.txt`));
    const over = await fetch(`${server.url}/search/index/upload`, { method: "POST", body: total });
    expect(over.status).toBe(413);
    expect(((await over.json()) as { detail: string }).detail).toBe(
      `Request body is larger than the limit of ${t.ctx.config.bodyLimitBytes} bytes`,
    );
  } finally {
    await server.stop();
  }
});

test("guards: a foreign Origin is 403, a text body is 415, JSON or no files is 422", async () => {
  const foreign = await upload(form("x", [pdf]), { origin: "https://evil.example" });
  expect(foreign.status).toBe(403);
  const json = await t.request("/search/index/upload", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ files: [] }),
  });
  expect(json.status).toBe(422);
  const text = await t.request("/search/index/upload", {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "files=x",
  });
  expect(text.status).toBe(415);
  const empty = new FormData();
  empty.set("name", "empty");
  expect((await upload(empty)).status).toBe(422);
  // The JSON route still takes no multipart.
  expect((await t.request("/search/index/stream", { method: "POST", body: form("x", [pdf]) })).status).toBe(
    415,
  );
});

test("OpenAPI documents the upload as multipart", async () => {
  const { body } = await t.json<{ paths: Record<string, Record<string, { requestBody?: unknown }>> }>(
    "/swagger/json",
  );
  const entry = body.paths["/search/index/upload"]?.post;
  expect(JSON.stringify(entry?.requestBody)).toContain("multipart/form-data");
});
