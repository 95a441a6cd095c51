/**
 * Documents built byte by byte, so the PDF path of indexing is tested on real files without committing
 * a binary: a minimal valid PDF (one page, Helvetica, one text line per input line), and hostile ones
 * that cost far more to read than they weigh: pages sharing a small compressed stream that expands to
 * megabytes of text operators (time), a stream that inflates to a gigabyte (memory), more pages than the
 * reader takes, and HTML nested deep enough to make the parser's work grow with its square.
 */
import { deflateSync } from "node:zlib";

const FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
const pdfString = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

/** A PDF of these objects (numbered from 1; object 1 is the catalog), with a correct xref table. */
function pdfOf(objects: (string | Uint8Array)[]): Uint8Array {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [encoder.encode("%PDF-1.4\n")];
  let size = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(size);
    for (const part of [encoder.encode(`${i + 1} 0 obj\n`), body, encoder.encode("\nendobj\n")]) {
      const bytes = typeof part === "string" ? encoder.encode(part) : part;
      parts.push(bytes);
      size += bytes.length;
    }
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) tail += `${String(offset).padStart(10, "0")} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`;
  parts.push(encoder.encode(tail));
  return new Uint8Array(Buffer.concat(parts));
}

/** A deflated content stream object holding `content`. */
function flateStream(content: string | Buffer): Uint8Array {
  const packed = deflateSync(content);
  return Buffer.concat([
    Buffer.from(`<< /Length ${packed.length} /Filter /FlateDecode >>\nstream\n`),
    packed,
    Buffer.from("\nendstream"),
  ]);
}

/** A PDF of `count` pages that all draw one content stream object (`contents`), in Helvetica. */
function pagesPdf(count: number, contents: string | Uint8Array): Uint8Array {
  const kids = Array.from({ length: count }, (_, i) => `${5 + i} 0 R`).join(" ");
  const page =
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>";
  return pdfOf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`,
    FONT,
    contents,
    ...Array(count).fill(page),
  ]);
}

/** An uncompressed content stream object. */
const plainStream = (content: string) => `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;

export function minimalPdf(lines: string[]): Uint8Array {
  const content = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${pdfString(l)}) Tj T*`).join(" ")} ET`;
  return pagesPdf(1, plainStream(content));
}

/**
 * `count` pages that all draw one deflated content stream of about `contentBytes` bytes of text
 * operators: a few kilobytes on disk, minutes of pdf.js work and hundreds of megabytes when read.
 */
export function contentBombPdf(count: number, contentBytes: number): Uint8Array {
  const line = `(${"A".repeat(200)}) Tj T*\n`;
  const body = `BT /F1 12 Tf 72 720 Td 14 TL\n${line.repeat(Math.ceil(contentBytes / line.length))}ET`;
  return pagesPdf(count, flateStream(body));
}

/** `count` pages, each one short line of text: a valid document with more pages than a cap allows. */
export function manyPagesPdf(count: number): Uint8Array {
  return pagesPdf(count, plainStream("BT /F1 12 Tf 72 720 Td (Page text.) Tj ET"));
}

/**
 * One page whose content stream inflates to `bytes` zero bytes (whitespace to a PDF reader): about a
 * thousandth of that on disk, and the whole of it in memory when read.
 */
export function inflateBombPdf(bytes: number): Uint8Array {
  return pagesPdf(1, flateStream(Buffer.alloc(bytes)));
}

/** HTML nested `depth` elements deep: a few bytes per level, and parsing time that grows with its square. */
export function nestedHtml(depth: number): string {
  return `<html><body>${"<div>".repeat(depth)}deep${"</div>".repeat(depth)}</body></html>`;
}
