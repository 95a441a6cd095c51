/** Small text helpers of the query engines: model reply text, sentence splitting, JSON from a reply. */
import type { AssistantMessage } from "@mariozechner/pi-ai";

export function replyText(message: AssistantMessage): string {
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** Sentences of a text; paragraphs (blank lines) always end one, so lists and headings stay apart. */
export function sentences(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .flatMap(
      (paragraph) =>
        paragraph
          .replace(/\s+/g, " ")
          .replace(ABBREVIATION, "$1\u0000")
          .match(/[^.!?]+[.!?]+["'’”)]*|[^.!?]+$/g) ?? [],
    )
    .map((s) => s.replaceAll("\u0000", ".").trim())
    .filter((s) => s.length > 0);
}

/** "Mrs. Cratchit" is one name, not the end of a sentence. */
const ABBREVIATION = /\b(Mr|Mrs|Ms|Dr|St|Messrs)\./g;

/** The first JSON object in a reply (models wrap it in prose or code fences), or undefined. */
export function jsonIn(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

/** `[Data: Sources (1, 2, 3, 4, 5, +more)]`-style id lists. */
export function idList(ids: (string | number)[], max = 5): string {
  const shown = ids.slice(0, max).join(", ");
  return ids.length > max ? `${shown}, +more` : shown;
}
