/**
 * The policy file as settings edits see it: its text, a revision (SHA-256 of the bytes, so any change to
 * the file, by us or by hand, is a new revision), and an atomic write (temp file in the same directory,
 * then rename: a reader or a crash never sees half a file). Loading for startup stays in policy.ts.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function policyRevision(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function readPolicyText(path: string): { text: string; revision: string } {
  const text = readFileSync(path, "utf8");
  return { text, revision: policyRevision(text) };
}

export function writePolicyAtomically(path: string, text: string): string {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(temp, text, { mode: 0o644 });
  renameSync(temp, path);
  return policyRevision(text);
}
