/**
 * Text a document carries that is not its content. A Project Gutenberg file (the largest source of the
 * public-domain books people index) wraps the book in the same licence every time: a paragraph before the
 * book and several thousand words after its "*** END OF THE PROJECT GUTENBERG EBOOK" line (older files say
"End of the Project Gutenberg EBook of …" a line before it, or instead of it). Indexed, that
 * licence becomes the largest community of every book and answers questions about themes with sentences
 * about copyright. The catalogue lines of the header (title, author, release date) are kept; the
 * licence is left out. Anything that is not a Project Gutenberg file is returned as it is.
 */

const START = /^\*{3} ?START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK[^\n]*$/im;
const END =
  /^(?:\*{3} ?END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK|End of (?:the |this )?Project Gutenberg(?:'s)? E-?[Bb]ook)[^\n]*$/im;
/** The header's catalogue lines begin with the first of these. */
const CATALOGUE = /^(?:Title|Author):/m;

export function withoutLicence(text: string): string {
  const end = text.match(END);
  let body = end?.index !== undefined ? text.slice(0, end.index) : text;
  const start = body.match(START);
  if (start?.index !== undefined) {
    const header = body.slice(0, start.index);
    const catalogue = header.match(CATALOGUE);
    const kept = catalogue?.index !== undefined ? header.slice(catalogue.index) : "";
    body = `${kept}\n\n${body.slice(start.index + start[0].length)}`;
  }
  return body === text ? text : body.trim();
}
