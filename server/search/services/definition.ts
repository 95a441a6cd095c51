/**
 * Questions that ask what something is like ("How does the author describe Cape Cod?", "What is the
 * shape of the island?", "What was the Hall like?") are answered by the sentence that says what it is:
 * the named subject followed by "is", "was", "seems" or "looks" and a description ("Cape Cod is the
 * bared and bended arm of Massachusetts"). Such a sentence seldom repeats the question's word ("shape"),
 * so without this rule it scores like any other sentence that names the subject. A question that only
 * names someone or something ("Who is Fezziwig?", "What was the Pequod?") asks the same: what the book
 * says they are, which a sentence says in apposition too ("Mr. Fezziwig, a kind-hearted, jovial old
 * merchant").
 */
import { escapeRegExp } from "../text.ts";
import type { Question } from "./question.ts";

const DESCRIBING =
  /\b(describes?|described|description|like|shape|shaped|form|appearance|looks?|resembles?|compared?)\b/i;
const CLAUSE_START = String.raw`(?:^|[,;:(—–-]\s*|\b(?:that|which|and|but)\s+)["'“‘_]?`;
const COPULA = String.raw`\s+(?:is|was|are|were|seems|seemed|looks|looked|resembles|resembled)\s+(?:not\s+)?(?:a|an|the|like|as|in|of|some|one)\b`;

/**
 * Whether a sentence says what the question's subject is: for "How is Fred related to Scrooge?", one
 * that names both and says what either is ("Fred, Scrooge's nephew"); undefined for a question of
 * another kind.
 */
export function definitionTest(question: Question): ((text: string) => boolean) | undefined {
  const subject = describedSubject(question);
  if (subject === undefined) return undefined;
  const defines = definer(subject);
  const other = question.counterpart;
  if (other === undefined) return defines;
  const definesOther = definer(other);
  return (text) => {
    const lower = text.toLowerCase();
    // What one is to the other, said of either while naming both ("Fred, Scrooge's nephew").
    return lower.includes(subject) && lower.includes(other) && (defines(text) || definesOther(text));
  };
}

/** The subject a describing question names (its longest run of capitalised words), lower case. */
export function describedSubject(question: Question): string | undefined {
  if (question.identity) return question.identity;
  // "What is the ocean to the author?", "What was the hall like?": a thing named by a common noun.
  const thing = question.text.match(THING)?.[1];
  if (thing && !/(?<=\S\s+)[\p{Lu}]/u.test(question.text)) return thing.toLowerCase();
  if (!DESCRIBING.test(question.text)) return undefined;
  let best: string | undefined;
  for (const m of question.text.matchAll(/(?<=\S\s+)[\p{Lu}][\p{L}’']*(?:\s+[\p{Lu}][\p{L}’']*)*/gu)) {
    const run = m[0].replace(/['’]s$/, "");
    if (!best || run.length > best.length) best = run;
  }
  return best?.toLowerCase();
}

const THING =
  /^what\s+(?:is|was|are|were)\s+(?:the|a|an)\s+([a-z]+)\s+(?:like|to\s+(?:the\s+(?:author|narrator|writer)|him|her|them|us|me))\s*\?*$/i;

/** Said of a name, in apposition: "Mr. Fezziwig, a kind-hearted…", "Fred, Scrooge's nephew", "Bob, clerk to…". */
const APPOSITION = String.raw`,\s+(?:(?:a|an|the|his|her|their|its)\s+|[\p{Lu}][\p{L}’'.-]*['’]s\s+|[a-z]+\s+(?:to|of)\s+)`;
const TITLE = String.raw`(?:(?:mr|mrs|miss|ms|dr|sir|old|young)\.?\s+)?`;

/**
 * Whether a sentence's clause opens with the subject and says what it is ("Cape Cod is the bared…"), or
 * the sentence opens with the subject in apposition ("Mr. Fezziwig, a kind-hearted, jovial old
 * merchant."). Made once per question: it is asked of every sentence of the pool.
 */
function definer(subject: string): (text: string) => boolean {
  const escaped = escapeRegExp(subject).replace(/\s+/g, "\\s+");
  const copula = new RegExp(`${CLAUSE_START}(?:the\\s+)?${TITLE}${escaped}${COPULA}`, "iu");
  const apposition = new RegExp(`^["'“‘_]?(?:the\\s+)?${TITLE}${escaped}${APPOSITION}`, "iu");
  // A list of characters: 'Tim Cratchit ("Tiny Tim"), a cripple, youngest son of Bob Cratchit.'
  const alias = new RegExp(
    `^[\\p{Lu}][\\p{L}’'. -]{0,40}\\(\\s*["“'‘]?(?:the\\s+)?${escaped}["”'’]?\\s*\\)${APPOSITION}`,
    "iu",
  );
  // Said by the subject: "I'm poor Ben Gunn, I am; and I haven't spoke with a Christian these three years."
  const introduces = new RegExp(
    `\\b(?:I\\s+am|I['’]m|[Mm]y\\s+name\\s+is|(?:they|men|people)\\s+call\\s+me)\\s+(?:poor\\s+|old\\s+|young\\s+|only\\s+)?${TITLE}${escaped}\\b`,
    "iu",
  );
  return (text) => copula.test(text) || apposition.test(text) || alias.test(text) || introduces.test(text);
}
