/**
 * Files uploaded for an index build, read by type with the `index` command's readers
 * (indexing/documents.ts; PDF in the bounded parse subprocess): the documents to index, and every file
 * left out with the reason.
 */
import {
  type InputDocument,
  type SkippedFile,
  type TextReader,
  uploadedFile,
} from "../indexing/documents.ts";

export type { SkippedFile, TextReader };

/** A reader that reads each owner's documents in their turn (indexing/parser.ts). */
export interface OwnedReader {
  for(owner: string): TextReader;
}

export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

/** Files are read at once (the reader bounds how many processes run); the answer keeps their order. */
export async function readUploads(
  files: UploadedFile[],
  reader: TextReader,
): Promise<{ documents: InputDocument[]; skipped: SkippedFile[] }> {
  const reads = await Promise.all(files.map((file) => uploadedFile(file.name, file.bytes, reader)));
  const documents: InputDocument[] = [];
  const skipped: SkippedFile[] = [];
  for (const read of reads) {
    if ("document" in read) documents.push(read.document);
    else skipped.push(read.skipped);
  }
  return { documents, skipped };
}
