/**
 * Files uploaded for an index build, read by type with the `index` command's readers
 * (indexing/documents.ts): the documents to index, and every file left out with the reason.
 */
import { type InputDocument, type SkippedFile, uploadedFile } from "../indexing/documents.ts";

export type { SkippedFile };

export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

export async function readUploads(
  files: UploadedFile[],
): Promise<{ documents: InputDocument[]; skipped: SkippedFile[] }> {
  const documents: InputDocument[] = [];
  const skipped: SkippedFile[] = [];
  for (const file of files) {
    const read = await uploadedFile(file.name, file.bytes);
    if ("document" in read) documents.push(read.document);
    else skipped.push(read.skipped);
  }
  return { documents, skipped };
}
