/**
 * The document parser's limits, one by one, on the real `parse` subprocess (jailed where bubblewrap
 * works): the extracted-text cap, the page cap, the output bound (a stand-in process that never stops
 * writing), memory on the unjailed path (the watchdog), how many run at once and in what order (owners
 * in turn), and an empty environment.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEFAULT_PARSE_LIMITS,
  DocumentParser,
  type ParseLimits,
} from "../../server/search/indexing/parser.ts";
import { tempDir } from "../helpers/tmp.ts";
import { inflateBombPdf, manyPagesPdf, minimalPdf } from "./pdf-fixture.ts";

const MIB = 1024 * 1024;
const dir = tempDir();
const parsers: DocumentParser[] = [];
afterAll(() => {
  for (const parser of parsers) parser.close();
  dir.remove();
});

function parser(
  limits: Partial<ParseLimits> = {},
  options: ConstructorParameters<typeof DocumentParser>[1] = {},
) {
  const made = new DocumentParser(
    { ...DEFAULT_PARSE_LIMITS, ...limits },
    { keepOut: [dir.path], ...options },
  );
  parsers.push(made);
  return made;
}
const utf8 = (text: string) => new TextEncoder().encode(text);

test("a PDF and HTML are read; an unreadable PDF says so", async () => {
  const reader = parser();
  expect(await reader.parse("pdf", minimalPdf(["Ada Lovelace", "Charles Babbage"]))).toEqual({
    text: "Ada Lovelace\nCharles Babbage",
  });
  expect(await reader.parse("html", utf8("<p>Grace &amp; Hopper</p><script>x()</script>"))).toEqual({
    text: "Grace & Hopper",
  });
  expect(await reader.parse("pdf", utf8("%PDF-1.4 not really"))).toEqual({
    reason: expect.stringMatching(/^unreadable PDF \(/),
  });
});

test("more text than the cap: refused with the cap", async () => {
  const reader = parser({ maxTextBytes: MIB });
  const html = `<p>${"word ".repeat(300_000)}</p>`;
  expect(await reader.parse("html", utf8(html))).toEqual({
    reason: "more than 1 MiB of text (search.read_max_text_mb)",
  });
});

test("more pages than the cap: refused before any page is read", async () => {
  expect(await parser({ maxPages: 5 }).parse("pdf", manyPagesPdf(6))).toEqual({
    reason: "a PDF of 6 pages; at most 5 are read (search.read_max_pages)",
  });
  expect(await parser({ maxPages: 6 }).parse("pdf", manyPagesPdf(6))).toEqual({
    text: expect.stringContaining("Page text."),
  });
});

test("a process that never stops writing is stopped at the output bound", async () => {
  const reader = parser({ maxTextBytes: MIB }, { command: () => ["/usr/bin/yes"] });
  expect(await reader.parse("html", utf8("<p>x</p>"))).toEqual({
    reason: "the reader wrote more than 1 MiB of text",
  });
});

test("unjailed, the memory watchdog stops a document that inflates past the limit", async () => {
  const reader = parser({ memoryBytes: 256 * MIB, timeoutMs: 60_000 }, { isolation: "none" });
  expect(await reader.parse("pdf", inflateBombPdf(1024 * MIB))).toEqual({
    reason: "reading it needed more than 256 MiB of memory (search.read_memory_mb)",
  });
}, 60_000);

test("no more processes than `parallel` at once; the rest wait their turn", async () => {
  // Each stand-in takes a lock directory for a moment; two at once would find it taken and fail.
  const lock = join(dir.path, "lock");
  const script = `mkdir ${lock} || exit 9; sleep 0.2; rmdir ${lock}; printf done`;
  const reader = parser({ parallel: 1 }, { command: () => ["/bin/sh", "-c", script] });
  const results = await Promise.all(Array.from({ length: 4 }, () => reader.parse("html", utf8("<p>x</p>"))));
  expect(results).toEqual(Array(4).fill({ text: "done" }));
});

test("owners waiting for a slot are served in turn: one owner's many documents do not hold another's back", async () => {
  // Each stand-in appends the document it was given (its stdin) to a log, one at a time.
  const log = join(dir.path, "order.log");
  const reader = parser(
    { parallel: 1 },
    { command: () => ["/bin/sh", "-c", `cat >> ${log}; echo >> ${log}`] },
  );
  const ann = reader.for("ann");
  const bob = reader.for("bob");
  await Promise.all([
    ann.parse("html", utf8("ann-1")),
    ann.parse("html", utf8("ann-2")),
    ann.parse("html", utf8("ann-3")),
    ann.parse("html", utf8("ann-4")),
    bob.parse("html", utf8("bob-1")),
    bob.parse("html", utf8("bob-2")),
  ]);
  // ann-1 had the free slot; then the owners alternate while both wait.
  expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
    "ann-1",
    "ann-2",
    "bob-1",
    "ann-3",
    "bob-2",
    "ann-4",
  ]);
});

test("the process gets an empty environment", async () => {
  const reader = parser({}, { command: () => ["/usr/bin/env"] });
  expect(await reader.parse("html", utf8(""))).toEqual({ text: "" });
});
