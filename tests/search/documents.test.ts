/**
 * What gets indexed: files by type (text and Markdown as they are, HTML stripped to the text a reader
 * sees, PDF text), .atriumignore files (nested ones too) and --exclude patterns, hidden entries and other
 * types left out, and every file left out listed with its reason; also over the `index` command and for
 * uploaded HTML.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readDocuments } from "../../server/search/indexing/documents.ts";
import { htmlText } from "../../server/search/indexing/file-text.ts";
import { DEFAULT_PARSE_LIMITS, DocumentParser } from "../../server/search/indexing/parser.ts";
import { createTestApp, postJson } from "../helpers/app.ts";
import { spawn } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { FIXTURES } from "./fixtures.ts";
import { minimalPdf } from "./pdf-fixture.ts";

const dir = tempDir();
const reader = new DocumentParser(DEFAULT_PARSE_LIMITS, { keepOut: [dir.path] });
afterAll(() => {
  reader.close();
  dir.remove();
});

const PAGE = `<!doctype html><html><head><title>Notes &amp; Queries</title><style>p { color: red }</style>
<script>const token = "do-not-index";</script></head>
<body><h1>Ada&nbsp;Lovelace</h1><p>Ada wrote the <b>first</b> program &mdash; for Babbage's engine.</p>
<!-- a comment nobody reads --><ul><li>Notes</li><li>Tables</li></ul><noscript>enable scripts</noscript></body></html>`;

function corpus(): string {
  const root = join(dir.path, `corpus-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(root, "drafts"), { recursive: true });
  mkdirSync(join(root, "notes"));
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, "a.txt"), "Plain text about Ada Lovelace.");
  writeFileSync(join(root, "b.md"), "# Markdown\n\nAbout Charles Babbage.");
  writeFileSync(join(root, "page.html"), PAGE);
  writeFileSync(
    join(root, "paper.pdf"),
    minimalPdf(["Ada Lovelace wrote notes in London.", "Babbage built engines."]),
  );
  writeFileSync(join(root, "data.json"), "{}");
  writeFileSync(join(root, "image.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00]));
  writeFileSync(join(root, "SOURCE.md"), "Where these files came from: not part of the material.");
  writeFileSync(join(root, ".atriumignore"), "# provenance notes\nSOURCE.md\n");
  writeFileSync(join(root, ".hidden.txt"), "hidden");
  writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main");
  writeFileSync(join(root, "drafts", ".atriumignore"), "*.txt\n");
  writeFileSync(join(root, "drafts", "draft.txt"), "An unfinished draft.");
  writeFileSync(join(root, "drafts", "kept.md"), "A finished chapter.");
  writeFileSync(join(root, "notes", "todo.md"), "Things to do.");
  return root;
}

describe("reading a folder by file type", () => {
  test("reads text, Markdown, HTML and PDF; lists everything else with its reason", async () => {
    const root = corpus();
    const { documents, skipped, warnings } = await readDocuments([root], { exclude: ["notes/"], reader });
    expect(documents.map((d) => d.title)).toEqual([
      "a.txt",
      "b.md",
      join("drafts", "kept.md"),
      "page.html",
      "paper.pdf",
    ]);
    const text = Object.fromEntries(documents.map((d) => [d.title, d.text]));
    expect(text["paper.pdf"]).toContain("Ada Lovelace wrote notes in London.");
    expect(text["paper.pdf"]).toContain("Babbage built engines.");
    expect(text["page.html"]).toContain("Ada Lovelace");
    expect(text["page.html"]).toContain("Ada wrote the first program — for Babbage's engine.");
    for (const hidden of ["<", "do-not-index", "color: red", "comment nobody", "&amp;", "enable scripts"])
      expect(text["page.html"]).not.toContain(hidden);
    expect(Object.fromEntries(skipped.map((s) => [s.path, s.reason]))).toEqual({
      ".git": "hidden folder",
      ".hidden.txt": "hidden file",
      "SOURCE.md": "ignored by .atriumignore",
      "data.json": "unsupported file type (.json)",
      [join("drafts", "draft.txt")]: `ignored by ${join("drafts", ".atriumignore")}`,
      "image.png": "unsupported file type (.png)",
      notes: "excluded by --exclude",
    });
    expect(warnings).toEqual([]);
  });

  test("a file of a readable type that cannot be read is skipped with a warning", async () => {
    const root = join(dir.path, "broken");
    mkdirSync(root);
    writeFileSync(join(root, "broken.pdf"), "%PDF-1.4 this is not a PDF");
    writeFileSync(join(root, "blank.html"), "<html><script>x()</script></html>");
    writeFileSync(join(root, "garbled.txt"), new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x81, 0x1b]));
    const { documents, skipped, warnings } = await readDocuments([root], { reader });
    expect(documents).toEqual([]);
    const reasons = Object.fromEntries(skipped.map((s) => [s.path, s.reason]));
    expect(reasons["broken.pdf"]).toStartWith("unreadable PDF");
    expect(reasons["blank.html"]).toBe("HTML with no visible text");
    expect(reasons["garbled.txt"]).toBe("not valid UTF-8 or Windows-1252 text");
    expect(warnings).toHaveLength(3);
  });

  test("a file saved as Latin-1 (Project Gutenberg's older -8.txt files) or as Windows-1252 HTML is read as its letters", async () => {
    const root = join(dir.path, "latin1");
    mkdirSync(root);
    // "Café Müller", in Latin-1; a page whose curly quotes are Windows-1252's 0x93 and 0x94.
    writeFileSync(
      join(root, "cafe-8.txt"),
      new Uint8Array([...Buffer.from("Caf"), 0xe9, 0x20, 0x4d, 0xfc, ...Buffer.from("ller")]),
    );
    writeFileSync(
      join(root, "page.html"),
      new Uint8Array([
        ...Buffer.from("<p>"),
        0x93,
        ...Buffer.from("Se"),
        0xf1,
        ...Buffer.from("or"),
        0x94,
        ...Buffer.from("</p>"),
      ]),
    );
    const { documents, skipped } = await readDocuments([root], { reader });
    expect(skipped).toEqual([]);
    expect(Object.fromEntries(documents.map((d) => [d.title, d.text]))).toEqual({
      "cafe-8.txt": "Café Müller",
      "page.html": "“Señor”",
    });
  });

  test("HTML text keeps block structure as lines", async () => {
    expect(await htmlText("<p>one</p><p>two<br>three</p><table><tr><td>a</td><td>b</td></tr></table>")).toBe(
      "one\n\ntwo\nthree\n\na\n\nb",
    );
  });
});

describe("the index command and uploads", () => {
  test("the command leaves out what .atriumignore and --exclude name, and lists it in the summary", async () => {
    const root = join(dir.path, "carol");
    mkdirSync(root);
    copyFileSync(join(FIXTURES, "stave-one.txt"), join(root, "stave-one.txt"));
    writeFileSync(join(root, "SOURCE.md"), "Provenance of the stave: not part of the story.");
    writeFileSync(join(root, ".atriumignore"), "SOURCE.md\n");
    writeFileSync(join(root, "page.html"), PAGE);
    writeFileSync(join(root, "data.json"), "{}");
    const proc = spawn(["index", root, "--exclude", "*.html", "--data-dir", join(dir.path, "data")]);
    const [code, stdout] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/documents\s+1 \(1 indexed, 0 unchanged\)/);
    expect(stdout).toMatch(/skipped\s+3\n/);
    expect(stdout).toContain("    SOURCE.md: ignored by .atriumignore\n");
    expect(stdout).toContain("    page.html: excluded by --exclude\n");
    expect(stdout).toContain("    data.json: unsupported file type (.json)\n");
  });

  test("an uploaded document named .html is indexed as its text", async () => {
    const t = await createTestApp();
    try {
      const built = await t.json<{ documents: number; skipped: unknown[] }>(
        "/search/index",
        postJson({
          documents: [
            { name: "page.html", text: PAGE },
            { name: "empty.txt", text: " " },
          ],
        }),
      );
      expect(built.body).toMatchObject({ documents: 1, skipped: [{ path: "empty.txt", reason: "empty" }] });
      const { body } = await t.json<{ context_data: { sources: { text: string }[] } }>(
        "/search/local",
        postJson({ query: "What did Ada write?" }),
      );
      const sources = body.context_data.sources.map((s) => s.text).join("\n");
      expect(sources).toContain("Ada wrote the first program");
      expect(sources).not.toContain("<");
      expect(sources).not.toContain("do-not-index");
    } finally {
      await t.close();
    }
  });
});
