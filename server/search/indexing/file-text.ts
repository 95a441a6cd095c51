/**
 * The text of a file by its type, for indexing: plain text and Markdown as they are, HTML as the text a
 * reader sees (Bun's HTMLRewriter drops scripts, styles and markup; `entities` decodes `&amp;`), PDF as
 * its pages' text (unpdf: pdf.js in plain JavaScript, loaded only when a PDF is met). Any other type is
 * refused with the reason, which the index summary lists.
 */
import { decodeHTML } from "entities";

export const TEXT_EXTENSIONS = new Set([".txt", ".text", ".md", ".markdown"]);
export const HTML_EXTENSIONS = new Set([".html", ".htm", ".xhtml"]);
export const PDF_EXTENSIONS = new Set([".pdf"]);

/** Elements whose content a reader never sees. */
const HIDDEN = "script,style,noscript,template,svg,iframe,object,head>meta,head>link";
/** Elements that end a line of text. */
const BLOCKS =
  "p,div,br,li,ul,ol,dd,dt,h1,h2,h3,h4,h5,h6,tr,td,th,table,section,article,header,footer,nav,aside,blockquote,pre,title,hr,figcaption";

export async function htmlText(html: string): Promise<string> {
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
  return decodeHTML(parts.join(""))
    .replace(/[ \t\f\r\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * A PDF's text. pdf.js never compiles font programs to JavaScript here (`isEvalSupported: false`: the
 * path of CVE-2024-4367) and fetches nothing; the file is the user's own (the `index` command).
 */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await import("unpdf");
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
  const { text } = await extractText(pdf, { mergePages: true });
  return text;
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
