/**
 * The text of a file by its type, for indexing: plain text and Markdown as they are, HTML as the text a
 * reader sees (Bun's HTMLRewriter drops scripts, styles and markup; `entities` decodes `&amp;`), PDF as
 * its pages' text (unpdf: pdf.js in plain JavaScript, loaded only when a PDF is met). Any other type is
 * refused with the reason, which the index summary lists.
 *
 * HTML and PDF are hostile input that can cost far more than they weigh (a small compressed stream that
 * expands to gigabytes, nesting that makes the parser quadratic): the server never runs these readers
 * itself. They run in the `parse` subprocess (parse-worker.ts), jailed and bounded by parser.ts; the caps
 * below stop a document inside that process as soon as it passes them.
 */

export const TEXT_EXTENSIONS = new Set([".txt", ".text", ".md", ".markdown"]);
export const HTML_EXTENSIONS = new Set([".html", ".htm", ".xhtml"]);
export const PDF_EXTENSIONS = new Set([".pdf"]);

/** Elements whose content a reader never sees. */
const HIDDEN = "script,style,noscript,template,svg,iframe,object,head>meta,head>link";
/** Elements that end a line of text. */
const BLOCKS =
  "p,div,br,li,ul,ol,dd,dt,h1,h2,h3,h4,h5,h6,tr,td,th,table,section,article,header,footer,nav,aside,blockquote,pre,title,hr,figcaption";

/** What one document may amount to; past either, it is refused with the reason (ReadRefused). */
export interface ReadCaps {
  /** Pages of a PDF. */
  maxPages: number;
  /** Bytes (UTF-8) of extracted text. */
  maxTextBytes: number;
}

/** A document past a cap: the message is the reason the summary lists. */
export class ReadRefused extends Error {
  override name = "ReadRefused";
}

const MIB = 1024 * 1024;

function textCapReason(caps: ReadCaps): string {
  return `more than ${caps.maxTextBytes / MIB} MiB of text (search.read_max_text_mb)`;
}

export async function htmlText(html: string, caps?: ReadCaps): Promise<string> {
  const parts: string[] = [];
  let hidden = 0;
  const rewriter = new HTMLRewriter()
    .on(HIDDEN, {
      element(element) {
        hidden++;
        element.onEndTag(() => {
          hidden--;
        });
        element.remove();
      },
    })
    .on(BLOCKS, {
      element(element) {
        parts.push("\n");
        if (!element.selfClosing && element.tagName !== "br" && element.tagName !== "hr")
          element.onEndTag(() => {
            parts.push("\n");
          });
      },
    })
    .onDocument({
      text(chunk) {
        if (hidden === 0) parts.push(chunk.text);
      },
    });
  await rewriter.transform(new Response(html)).text();
  // The entity tables load with the first HTML read, not with the server (about 20 ms of its start).
  const { decodeHTML } = await import("entities");
  const text = decodeHTML(parts.join(""))
    .replace(/[ \t\f\r\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (caps && Buffer.byteLength(text) > caps.maxTextBytes) throw new ReadRefused(textCapReason(caps));
  return text;
}

/**
 * A PDF's text, page by page (unpdf's extractText, with the caps checked as it goes: a page count past
 * the cap is refused before any page is read, the text once it passes its cap). pdf.js never compiles
 * font programs to JavaScript here (`isEvalSupported: false`: the path of CVE-2024-4367) and fetches
 * nothing.
 */
export async function pdfText(bytes: Uint8Array, caps: ReadCaps): Promise<string> {
  const { getDocumentProxy } = await import("unpdf");
  // pdf.js's getDocument options (unpdf's bundled typings do not list them all).
  const options = {
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  };
  const pdf = await getDocumentProxy(
    new Uint8Array(bytes),
    options as Parameters<typeof getDocumentProxy>[1],
  );
  if (pdf.numPages > caps.maxPages)
    throw new ReadRefused(
      `a PDF of ${pdf.numPages} pages; at most ${caps.maxPages} are read (search.read_max_pages)`,
    );
  const texts: string[] = [];
  let size = 0;
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number);
    const content = await page.getTextContent();
    const text = content.items
      .map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : ""))
      .join("");
    page.cleanup();
    size += Buffer.byteLength(text) + 1;
    if (size > caps.maxTextBytes) throw new ReadRefused(textCapReason(caps));
    texts.push(text);
  }
  // unpdf's merge of the pages, as extractText({ mergePages: true }) does.
  return texts
    .join("\n")
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n");
}

export type FileKind = "text" | "html" | "pdf";

/** The kind of file an extension names, or undefined when indexing does not read that type. */
export function kindOf(extension: string): FileKind | undefined {
  const ext = extension.toLowerCase();
  if (TEXT_EXTENSIONS.has(ext)) return "text";
  if (HTML_EXTENSIONS.has(ext)) return "html";
  if (PDF_EXTENSIONS.has(ext)) return "pdf";
  return undefined;
}
