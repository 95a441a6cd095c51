/**
 * A search answer as a person reads it: Markdown (lists, emphasis) rendered safely by the chat's
 * renderer, with each `[Data: Sources (3, 7); Entities (2)]` reference turned into links, one per id,
 * that the view answers by highlighting the cited row of the context tables (`data-table`, `data-id`).
 */
import { renderMarkdown } from "../../chat/markdown.ts";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** One `Name (ids)` part of a reference, its numeric ids as links to rows of the table it names. */
function linkPart(part: string): string {
  const m = part.match(/^\s*([A-Za-z]+) \(([^)]*)\)\s*$/);
  if (!m) return escapeHtml(part);
  const [, name, list] = m as unknown as [string, string, string];
  const table = name.toLowerCase();
  const ids = list
    .split(/,\s*/)
    .map((id) =>
      /^\d+$/.test(id)
        ? `<a href="#/search" class="cite" data-table="${table}" data-id="${id}" aria-label="${escapeHtml(name)} row ${id}">${id}</a>`
        : escapeHtml(id),
    );
  return `${escapeHtml(name)} (${ids.join(", ")})`;
}

/** The reference markers of an answer as links (a marker still being streamed stays text). */
export function linkCitations(text: string): string {
  return text.replace(
    /\[Data: ([^\]\n]+)\]/g,
    (_, inner: string) =>
      `<span class="citation">[Data: ${inner.split(/;\s*/).map(linkPart).join("; ")}]</span>`,
  );
}

export function renderAnswer(text: string): string {
  return renderMarkdown(linkCitations(text));
}
