/**
 * Markdown to safe HTML: `marked` renders (GitHub-flavoured, line breaks kept), DOMPurify removes
 * anything that could run (scripts, event handlers, javascript: URLs, forms, styles) before it reaches
 * the DOM. Links open in a new tab without an opener. Code blocks keep their language as a class.
 */
import DOMPurify from "dompurify";
import { marked } from "marked";

marked.setOptions({ gfm: true, breaks: true });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const PURIFY = {
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
};

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false }) as string;
  return DOMPurify.sanitize(html, PURIFY) as unknown as string;
}
