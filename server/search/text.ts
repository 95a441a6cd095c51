/**
 * Small text helpers of the query services: sentence splitting, citation id lists, a token estimate, a
 * regular expression that matches a text literally.
 */

/**
 * Sentences of a text; paragraphs (blank lines) always end one, so lists and headings stay apart. A
 * quotation's "!" or "?" does not end the sentence its attribution continues ("'Christmas a humbug,
 * uncle!' said Scrooge's nephew." is one sentence, not a quote and a "said Scrooge's nephew.").
 */
export function sentences(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .flatMap((paragraph) =>
      attributed(
        paragraph
          .replace(/\s+/g, " ")
          .replace(ABBREVIATION, "$1\u0000")
          .match(/[^.!?]+[.!?]+["'’”)]*|[^.!?]+$/g) ?? [],
      ),
    )
    .map((s) => s.replaceAll("\u0000", ".").trim())
    .filter((s) => s.length > 0);
}

/** Joins a piece opening in lower case to a quotation it follows that ends with "!" or "?". */
function attributed(pieces: string[]): string[] {
  const out: string[] = [];
  for (const piece of pieces) {
    const last = out.length - 1;
    if (last >= 0 && /^\s*\p{Ll}/u.test(piece) && /[!?]["'’”)]+$/.test(out[last] as string))
      out[last] += piece;
    else out.push(piece);
  }
  return out;
}

/** The first sentence of a text (abbreviations such as "Mrs." do not end it), or the text itself. */
export function firstSentence(text: string): string {
  return sentences(text)[0] ?? text.trim();
}

/**
 * The sentences of a description that say something of the one it names: more than the name (a line of
 * dialogue that is only the name, '"Dermott McDermott."', says nothing about him); all of them if none do.
 */
export function sentencesAbout(description: string, name: string): string[] {
  const all = sentences(description);
  const beyond = (s: string) => s.replaceAll(name, " ").match(/\p{L}+/gu)?.length ?? 0;
  const telling = all.filter((s) => beyond(s) >= 3);
  return telling.length > 0 ? telling : all.length > 0 ? all : [description.trim()];
}

/** The first sentence of a description that says something of the one it names. */
export function sentenceAbout(description: string, name: string): string {
  return sentencesAbout(description, name)[0] as string;
}

/** Digitised books repeat sentences as picture captions ("[Illustration: _..._]"): one copy is enough. */
export function stripCaptions(text: string): string {
  return text.replace(/\[Illustration[^\]]{0,2000}\]/g, " ");
}

/** "Mrs. Cratchit" is one name, not the end of a sentence. */
const ABBREVIATION = /(?<![A-Za-z])(Mr|Mrs|Ms|Dr|St|Messrs)\./g;

/** A text cut to at most `max` characters at a word boundary, marked with "…" when cut (never mid-word). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:(—–-]+$/, "")}…`;
}

/** `[Data: Sources (1, 2, 3, 4, 5, +more)]`-style id lists. */
export function idList(ids: (string | number)[], max = 5): string {
  const shown = ids.slice(0, max).join(", ");
  return ids.length > max ? `${shown}, +more` : shown;
}

/**
 * A quick token estimate (about 4 characters per token in English) for packing context rows at query
 * time: exact counting costs tens of milliseconds per 50 KB, most of a search's time budget. Text units,
 * the bulk of a context, carry exact counts stored at indexing (indexing/units.ts).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A text as a regular expression matching it literally ("Mr. Collins" → "Mr\. Collins"). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Words in capitals said as a name is written: "ELINOR MACARTNEY LANE" → "Elinor Macartney Lane". */
export function titleCased(capitals: string): string {
  return capitals
    .toLowerCase()
    .replace(/(^|[\s('’-])(\p{L})/gu, (_, gap: string, c: string) => gap + c.toUpperCase());
}
