/**
 * The question's own phrases: runs of two or three of its words that begin and end with a content word
 * ("make the being", "set out from" aside, whose ends are not). A page that says the question's phrase
 * verbatim ("…to make the being of a gigantic stature…") is about what the question asks even when every
 * single word of it is common in the book, so BM25 on single words leaves it out of the pool.
 */
const MAX_PHRASES = 12;

/** Words that cannot end a phrase: articles, pronouns, prepositions, auxiliaries, question words. */
const FUNCTION_WORDS = new Set(
  `a an the and or but nor of in on at to for from by with as into onto upon about than then that this these
  those he she it they we you i me him her them us his its their our your my who whom whose what which when
  where why how is was are were be been do does did has have had will would can could should shall may might
  must not no so if`.split(/\s+/),
);

export function questionPhrases(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = (w: string | undefined) => w !== undefined && w.length > 1 && !FUNCTION_WORDS.has(w);
  const out = new Set<string>();
  for (let i = 1; i < words.length; i++) {
    if (!content(words[i])) continue;
    for (const len of [2, 3]) {
      const last = words[i + len - 1];
      if (content(last)) out.add(words.slice(i, i + len).join(" "));
    }
  }
  return [...out].slice(0, MAX_PHRASES);
}
