/**
 * "Who wrote this book?": a book says who wrote it in its front matter, not in its story. A line of
 * credit names the author: a catalogue line ("Author: Elinor Macartney Lane", as Project Gutenberg's
 * header keeps it) or a title page's "by …" line ("By Jane Austen", "BY" over "CHARLES DICKENS"). The
 * passage scorer finds a page's lines of credit, and a sentence holding one answers with its name.
 */
import { titleCased } from "../text.ts";

/** What a question calls the material ("this book", "the story", "it"), or a title it writes ("Katrine"). */
const MATERIAL = `(?:it|this|that|(?:this|the) (?:book|story|novel|novella|text|essay|tale|poem|play|work|document|piece|article|pamphlet)|(?<title>[^?]+))`;
/**
 * "Who wrote this book?", "Who is the author (of Katrine)?", "What is the author's name?", "By whom was it
 * written?", "Who is the story by?" ("Who wrote the letter?" asks about the story, not its author.)
 */
const AUTHORSHIP = [
  `^who (?:wrote|authored|penned) ${MATERIAL}$`,
  `^(?:who|what)(?:'s|’s| is| was) the (?:name of the )?(?:author|writer)(?: of ${MATERIAL})?$`,
  `^what(?:'s|’s| is| was) the (?:author|writer)(?:'s|’s) name$`,
  `^by whom (?:was|is) ${MATERIAL} written$`,
  `^who (?:is|was) ${MATERIAL} (?:written )?by$`,
].map((source) => new RegExp(source, "u"));

/** Whether a question asks who wrote the material itself; a title it names must be written capitalised. */
export function asksAuthorship(question: string): boolean {
  const original = question
    .trim()
    .replace(/\s+/g, " ")
    .replace(/[?.!\s]+$/, "");
  const q = original.toLowerCase();
  for (const pattern of AUTHORSHIP) {
    const m = q.match(pattern);
    if (!m) continue;
    const title = m.groups?.title;
    if (title === undefined) return true;
    const start = m.index !== undefined ? q.lastIndexOf(title) : -1;
    return start >= 0 && /^["“‘_]?\p{Lu}/u.test(original.slice(start));
  }
  return false;
}

/** A name as a credit writes it: two to six words, capitalised or in capitals ("Mary Wollstonecraft (Godwin) Shelley"). */
const WORD = String.raw`(?:\(?[\p{Lu}][\p{L}.'’-]*\)?|de|van|von|la|le)`;
const NAME = String.raw`(${WORD}(?:\s+${WORD}){1,5})`;
const CATALOGUE = new RegExp(String.raw`^(?:Author|Authors|Written by|Writer)\s*:\s*${NAME}$`, "u");
const BY_LINE = new RegExp(String.raw`^(?:by|BY|By)\s+(?:Dr\.\s+|Mrs?\.\s+)?${NAME}[.,]?$`, "u");
const NAME_LINE = new RegExp(`^${NAME}[.,]?$`, "u");

export interface Credit {
  /** The line as the page writes it, its spaces made single. */
  line: string;
  /** The author, as written (capitals softened). */
  name: string;
}

/** The lines of credit on a page: "Author: X", "by X", or "BY" alone above a line that is a name. */
export function creditsIn(page: string): Credit[] {
  const lines = page.split(/\r?\n/).map((l) => l.replace(/\s+/g, " ").trim());
  const out: Credit[] = [];
  for (const [i, line] of lines.entries()) {
    const name = line.match(CATALOGUE)?.[1] ?? line.match(BY_LINE)?.[1];
    if (name) out.push({ line, name: softened(name) });
    else if (/^by$/i.test(line)) {
      const next = lines.slice(i + 1).find((l) => l !== "");
      const under = next?.match(NAME_LINE)?.[1];
      if (next && under) out.push({ line: next, name: softened(under) });
    }
  }
  return out;
}

/** "ELINOR MACARTNEY LANE" on a title page, said as a name is written. */
function softened(name: string): string {
  return name === name.toUpperCase() ? titleCased(name) : name;
}
