/**
 * The `parse` subprocess (`atrium parse pdf|html --max-pages N --max-text-bytes N`): reads one document's
 * bytes from stdin and writes its text to stdout (exit 0), or a one-line reason it has none (exit 2: a
 * cap passed, a file pdf.js cannot read). The server spawns it per document (parser.ts) with an empty
 * environment, jailed where bubblewrap works, and owns time and memory: it kills this process past its
 * limits. Nothing here trusts the document; nothing the server trusts comes from here but bounded text.
 */
import { parseArgs } from "node:util";
import { htmlText, pdfText, type ReadCaps, ReadRefused } from "./file-text.ts";

/** Exit code of a document without text to give, the reason on stdout. */
export const REFUSED_EXIT = 2;

export async function parseWorkerMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { "max-pages": { type: "string" }, "max-text-bytes": { type: "string" } },
  });
  const kind = positionals[0];
  const caps: ReadCaps = {
    maxPages: Number(values["max-pages"]),
    maxTextBytes: Number(values["max-text-bytes"]),
  };
  if ((kind !== "pdf" && kind !== "html") || !(caps.maxPages > 0) || !(caps.maxTextBytes > 0)) {
    process.stderr.write("usage: parse pdf|html --max-pages N --max-text-bytes N (document on stdin)\n");
    return 64;
  }
  const bytes = await Bun.stdin.bytes();
  let text: string;
  try {
    text =
      kind === "pdf"
        ? await pdfText(bytes, caps)
        : await htmlText(new TextDecoder("utf-8", { fatal: false }).decode(bytes), caps);
  } catch (error) {
    const message = ((error as Error).message ?? String(error)).replace(/\s+/g, " ").slice(0, 300);
    const reason = error instanceof ReadRefused ? message : `unreadable ${kind.toUpperCase()} (${message})`;
    await Bun.write(Bun.stdout, reason);
    return REFUSED_EXIT;
  }
  await Bun.write(Bun.stdout, text);
  return 0;
}
