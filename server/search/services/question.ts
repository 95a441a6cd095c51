/**
 * Question analysis for the offline answerers: what kind of answer a question wants (a person, a place,
 * an organisation, a date, a number, or a thing) and the question's own terms.
 *
 * The type comes from the question word ("who", "where", "when", "how many") or, after "which"/"what",
 * from the head noun that follows it ("which county" wants a place, "which month" a date, "what sum" a
 * number, "whose wife" a person); the noun lists are plain English, not any book's words. The terms are
 * the question's content words, stemmed for matching; how rare each is in the index is weighed later.
 */
import { HONORIFICS } from "../indexing/names.ts";
import { asksAuthorship } from "./credits.ts";
import { queryTerms, stem } from "./terms.ts";

export type AnswerType = "person" | "place" | "organization" | "date" | "number" | "thing";

export interface Question {
  text: string;
  type: AnswerType;
  /** Content words of the question, lower case (the words a passage is matched on). */
  terms: string[];
  /** The noun after "which"/"what" ("which county" → county), when there is one. */
  focus?: string;
  /** The question asks for a name ("the name of…", "which books"): a proper name is the answer. */
  wantsName: boolean;
  /** The question asks for a title ("which books", "what ship"): italics and untyped names answer. */
  title: boolean;
  /** "at the end", "in the beginning": where in the material the answer lies. */
  position?: "start" | "end";
  /** Terms the question writes capitalised mid-sentence (names): they find the passage, not the fact. */
  names: string[];
  /** For a number: the words a fitting one is counted in ("how far" → miles, leagues, …). */
  measures?: Set<string>;
  /** Everyday words for the question's terms ("born" → birth, native), weighed a little less. */
  related: Map<string, string[]>;
  /**
   * "Who is Fezziwig?", "What was the Pequod?": a question that names someone or something and asks
   * nothing more wants what the book says they are; their name, lower case. "How is Fred related to
   * Scrooge?" asks the same of Fred (the sentence saying what Fred is to Scrooge: "Fred, Scrooge's
   * nephew").
   */
  identity?: string;
  /** "How is Fred related to Scrooge?": the other name (scrooge), which the answering sentence names. */
  counterpart?: string;
  /**
   * "What does Scrooge think of Christmas?": the names of those whose opinion is asked (scrooge, not
   * christmas); what they say or think answers (speaker.ts). Undefined for other questions.
   */
  opinion?: string[];
  /** "Who wrote this book?": answered by a line of credit in the front matter (credits.ts). */
  authorship?: boolean;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const PERSON_NOUNS = words(`man men woman women person people persons friend friends brother brothers
  sister sisters father mother parent parents son sons daughter daughters wife husband uncle aunt cousin
  nephew niece child children boy girl lady gentleman gentlemen king queen prince princess lord duke earl
  governor captain master mistress servant servants officer officers doctor author writer poet clerk
  partner apprentice employer owner tenant guest visitor stranger character characters hero heroine
  neighbour neighbor companion lover suitor relative relation relations family creator murderer victim
  member members sailor sailors soldier soldiers minister priest judge king's colonel general ancestor
  grandfather grandmother teacher professor student pupil heir heiress widow widower bride bridegroom`);
const PLACE_NOUNS = words(`place places city cities town towns village country countries county counties
  port ports harbour harbor island islands state states street streets house home land lands nation region
  province colony river rivers mountain mountains lake sea coast shore beach estate estates park inn
  parish kingdom continent capital district neighbourhood neighborhood spot location destination
  birthplace residence address room building castle church hall`);
const ORGANIZATION_NOUNS = words(`university universities college school company firm bank society
  regiment army navy newspaper paper journal church party club institution organisation organization
  business shop`);
const DATE_NOUNS = words(`year years month months day days date dates time season seasons century
  centuries hour age era week weeks morning evening night`);
const NUMBER_NOUNS = words(`number sum amount price cost height length distance age size weight count
  income fortune salary wage wages value worth`);
/** Nouns whose answer is a title or a name ("which books", "what ship", "which newspaper"). */
const NAMED_THINGS = words(`book books title titles name names ship ships vessel vessels schooner brig yacht
  frigate sloop barque steamer newspaper
  journal play plays poem poems work works song songs`);

/** Analyses a question: its answer type, its terms, its focus noun. */
export function analyseQuestion(text: string): Question {
  const q = text.trim().toLowerCase().replace(/\s+/g, " ");
  const [identity, counterpart] = identityOf(text.trim());
  const focus = focusNoun(q);
  const opinion = opinionHolders(text);
  const wantsName =
    identity === undefined &&
    (/\b(?:name[ds]?|call|calls|called|christened)\b/.test(q) ||
      (focus !== undefined && NAMED_THINGS.has(focus)) ||
      /^(who|whom)\b/.test(q));
  // "Who wrote this book?": the front matter says so ("Author: …", "by …"), in the author's own word.
  const authorship = asksAuthorship(text);
  return {
    text,
    type: authorship ? "person" : identity ? "thing" : answerType(q, focus),
    terms: authorship
      ? ["author", ...namesIn(text).filter((n) => n !== "author")]
      : contentTerms(text, q, identity !== undefined, opinion !== undefined),
    focus,
    wantsName,
    title:
      (focus !== undefined && NAMED_THINGS.has(focus) && !/^names?$/.test(focus)) ||
      // "What is the name of the ship?", "…of Flint's ship?": a name asked of a thing that bears a title.
      NAMED_THINGS.has(
        q.match(/\bname of (?:the |a |an |his |her |their |its |[\p{L}.]+['’]s )?(\p{L}+)/u)?.[1] ?? "",
      ),
    position: authorship ? "start" : positionCue(q),
    names: namesIn(text),
    measures: measuresOf(q),
    related: relatedTerms(queryTerms(text)),
    authorship,
    identity,
    counterpart,
    opinion,
  };
}

/** A name as a question writes it: capitalised words, with "of" and "the" between them. */
const NAME = String.raw`(?:the\s+)?([\p{Lu}][\p{L}’'.-]*(?:\s+(?:of\s+|the\s+)*[\p{Lu}][\p{L}’'.-]*)*)`;
const IDENTITY = [
  new RegExp(String.raw`^(?:[Ww]ho|[Ww]hat)\s+(?:is|was|are|were)\s+${NAME}\s*\?*$`, "u"),
  // Asked as a request: "Tell me about Ben Gunn.", "Describe Fezziwig", "What do we know about Marley?"
  new RegExp(
    String.raw`^(?:(?:[Pp]lease\s+)?(?:[Tt]ell\s+me\s+(?:about|of)|[Dd]escribe|[Ii]ntroduce)|[Ww]hat\s+(?:do\s+we|does\s+the\s+(?:text|book|story)\s+(?:say|tell\s+us))\s+(?:know\s+)?about)\s+${NAME}\s*[?.!]*$`,
    "u",
  ),
  // What someone does: said of them the same way ("Bob Cratchit, clerk to Ebenezer Scrooge").
  new RegExp(
    String.raw`^[Ww]hat\s+(?:is|was)\s+${NAME}['’]s\s+(?:job|occupation|profession|trade|calling|position)\s*\?*$`,
    "u",
  ),
  new RegExp(String.raw`^[Ww]hat\s+(?:does|did)\s+${NAME}\s+do(?:\s+for\s+a\s+living)?\s*\?*$`, "u"),
  // "What role does Katrine play?" (as the suggested questions ask): what the text says she is.
  new RegExp(
    String.raw`^[Ww]hat\s+(?:role|part)\s+(?:does|did|do)\s+${NAME}\s+play(?:\s+in\s+(?:the|this)\s+\w+)?\s*\?*$`,
    "u",
  ),
  // How two are related: what the first is to the second.
  new RegExp(
    String.raw`^[Hh]ow\s+(?:is|was|are|were)\s+${NAME}\s+(?:related|connected)\s+to\s+${NAME}\s*\?*$`,
    "u",
  ),
  new RegExp(
    String.raw`^[Hh]ow\s+(?:are|were)\s+${NAME}\s+and\s+${NAME}\s+(?:related|connected)\s*\?*$`,
    "u",
  ),
  new RegExp(
    String.raw`^[Ww]hat\s+(?:is|was)\s+the\s+(?:relationship|relation|connection)\s+between\s+${NAME}\s+and\s+${NAME}\s*\?*$`,
    "u",
  ),
];

const OPINION =
  /\b(?:think|thinks|thought|feel|feels|felt|believe|believes|believed)\s+(?:of|about|on|towards?|regarding)\b|\b(?:opinion|view|views|feelings?|attitude)\s+(?:of|on|about|towards?)\b/i;

/** Whose opinion a question asks: the names it writes before "think of", "feel about", "opinion of". */
function opinionHolders(text: string): string[] | undefined {
  const at = text.search(OPINION);
  return at < 0 ? undefined : namesIn(text.slice(0, at));
}

/** The name a question asks about, and the one it asks in relation to ("how is Fred related to Scrooge"). */
function identityOf(text: string): [string?, string?] {
  for (const pattern of IDENTITY) {
    const m = text.match(pattern);
    // "Tell me about Pell.": the request's full stop is no part of the name.
    const name = (n: string | undefined) => n?.replace(/\.+$/, "").toLowerCase();
    if (m?.[1]) return [name(m[1]), name(m[2])];
  }
  return [];
}

/** Words capitalised after the question's first word: names, not the titles before them ("Mr." Bennet). */
function namesIn(text: string): string[] {
  const out = new Set<string>();
  const titles = titlesIn(text);
  for (const m of text.matchAll(/(?<=\S\s+)([A-Z][\p{L}’']*)/gu)) {
    const name = (m[1] as string).toLowerCase().replace(/['’]s$/, "");
    if (!titles.has(name)) out.add(name);
  }
  return [...out];
}

/**
 * The titles a question writes before a name ("Mr. Bennet", "Lady Catherine"): part of how it refers to
 * someone, not a word to find the passage by ("the wife of Mr. Collins" says nothing of Mr. Bennet).
 */
function titlesIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z][a-z]*)\.?\s+[A-Z]/g)) {
    const word = (m[1] as string).toLowerCase();
    if (HONORIFICS.has(word)) out.add(word);
  }
  return out;
}

const MONEY =
  "pound pounds shilling shillings pence penny guinea guineas dollar dollars crown crowns franc francs sovereign sovereigns cents year a-year";
/** The words a number of each kind is counted in, by the question word. */
const MEASURES: [RegExp, string][] = [
  [/^how old\b|\bwhat age\b/, "year years old age"],
  [
    /^how (far|distant)\b|\bwhat distance\b/,
    "mile miles league leagues yard yards rod rods feet foot furlong furlongs off distant",
  ],
  [/^how (tall|high)\b|\bwhat height\b/, "feet foot inch inches height high tall yards"],
  [
    /^how long\b/,
    "year years month months week weeks day days hour hours minute minutes feet foot mile miles yards",
  ],
  [
    /^how much\b|\bwhat (sum|price|amount)\b|\bworth\b|\bearn|\bcost|\b(income|fortune|salary|wages|rent)\b/,
    MONEY,
  ],
];

function measuresOf(q: string): Set<string> | undefined {
  for (const [pattern, list] of MEASURES) if (pattern.test(q)) return words(list);
  // "How many children": a number of children, not of girls.
  const counted = q.match(/^how many (\w+)/)?.[1];
  return counted ? new Set([counted, stem(counted)]) : undefined;
}

/** Plain English equivalents (a question seldom uses the book's own word); no book's vocabulary. */
const RELATED: Record<string, string> = {
  born: "birth native",
  birth: "born native",
  die: "death dead died",
  died: "death dead die",
  death: "die died dead",
  kill: "killed murder murdered death",
  killed: "kill murder murdered death",
  marry: "married marriage wife husband",
  married: "marry marriage wife husband",
  wife: "married husband",
  husband: "married wife",
  live: "lived home house dwelt dwelling resided",
  lived: "live home house dwelt dwelling resided",
  employ: "employed employer clerk master service",
  employs: "employed employer clerk master service",
  work: "worked employed business office",
  study: "student studied studies",
  studied: "student study",
  write: "wrote written author",
  wrote: "write written author",
  eat: "ate dinner supper meal",
  dinner: "supper meal feast",
  earn: "wages salary paid",
  tall: "height high",
  old: "age",
  shape: "form figure outline",
  feel: "felt feeling feelings",
  ask: "asked begged entreated demanded",
  asks: "asked begged entreated demanded",
  warn: "warning beware",
  warning: "warn beware",
  change: "changed altered",
  changed: "change altered",
  father: "papa",
  mother: "mamma mama",
};

function relatedTerms(terms: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const t of terms) {
    const list = RELATED[t];
    if (list) out.set(t, list.split(" "));
  }
  return out;
}

/**
 * The words a passage is matched on: not the words that frame the question ("name", "kind"), nor those
 * that mean the material itself ("the story", "the author": the book says "I"), nor the words of a
 * position cue ("by the end of the story"), nor the titles before names ("Mr."), nor, in a question
 * asking who someone is, its framing words ("related", "job"), nor, in one asking what someone thinks,
 * its own ("feel", "believe": "How does Scrooge feel about the poor?" is not answered by "felt").
 */
function contentTerms(text: string, q: string, identity: boolean, opinion: boolean): string[] {
  const cue = q.match(POSITION)?.[0] ?? "";
  const dropped = new Set([
    ...(cue.match(/[a-z]+/g) ?? []),
    // "What happens at the end?", "What happened in Bristol?": what happens there is what is asked, not
    // the word "happen" (a page that says it is no nearer).
    ...HAPPENING_WORDS,
    ...titlesIn(text),
    ...(identity ? IDENTITY_WORDS : []),
    ...(opinion ? OPINION_WORDS : []),
  ]);
  return queryTerms(text).filter((t) => !QUESTION_WORDS.has(t) && !MATERIAL_WORDS.has(t) && !dropped.has(t));
}

/** Verbs that ask what takes place: the place or the moment named is what the answer is about. */
const HAPPENING_WORDS = words("happen happens happened happening occur occurs occurred");

/** Words for the material and its writer. */
const MATERIAL_WORDS = words(`story stories novel novels book's text tale tales essay narrative narrator
  author author's writer's novella chapter`);

/** The words that frame a question asking what someone thinks of something. */
const OPINION_WORDS = words("feel feels felt believe believes believed feelings feeling attitude views");

/** The words that frame a question asking who or what someone is ("How is X related to Y?"). */
const IDENTITY_WORDS = words(
  "related relationship relation connected connection job occupation profession trade calling position living tell describe know role part play",
);

/** Words that frame a question rather than say what it is about. */
const QUESTION_WORDS = words(
  "name named names call called first kind sort type way many much think thinks thought describe describes give gives opinion view",
);

function answerType(q: string, focus: string | undefined): AnswerType {
  if (/^how (many|much|old|long|far|tall|high|big|large|often|deep|wide|heavy)\b/.test(q)) return "number";
  if (/\b(what|which) (sum|amount|price|number)\b/.test(q)) return "number";
  // "What is Mr. Bennet's estate worth a year?": a value, whatever is valued.
  if (/^what (?:is|was|are|were) .+ worth\b/.test(q)) return "number";
  if (/^(when|at what time)\b|\bin what year\b/.test(q)) return "date";
  if (/^(where|whence|whither)\b|\bwhere (does|did|is|was|do|were|are)\b/.test(q)) return "place";
  if (/^(who|whom|whose)\b|\b(by|from|to|with|for) whom\b|\bwhose\b/.test(q)) return "person";
  if (focus) {
    if (PERSON_NOUNS.has(focus)) return "person";
    if (PLACE_NOUNS.has(focus)) return "place";
    if (ORGANIZATION_NOUNS.has(focus)) return "organization";
    if (DATE_NOUNS.has(focus)) return "date";
    if (NUMBER_NOUNS.has(focus)) return "number";
  }
  // "What is Scrooge's nephew's name?", "what was the captain's name?": whose name it is decides.
  const owner = q.match(/\b([a-z]+)['’]s (?:first |christian |last |sur)?name\b/)?.[1];
  if (owner && (PERSON_NOUNS.has(owner) || PLACE_NOUNS.has(owner))) return typeOfNoun(owner);
  // "What is Lady Catherine's residence?", "what did he call his house?": the noun asked about decides.
  const asked = askedNoun(q);
  if (asked) return typeOfNoun(asked);
  // "the name of the mother…", "the name of Lady Catherine's residence": what is named decides.
  const named = q.match(/\bname of (.+)/)?.[1];
  const head = named ? headNoun(named) : undefined;
  if (head && PERSON_NOUNS.has(head)) return "person";
  if (head && PLACE_NOUNS.has(head)) return "place";
  return "thing";
}

function typeOfNoun(noun: string): AnswerType {
  if (PERSON_NOUNS.has(noun)) return "person";
  if (PLACE_NOUNS.has(noun)) return "place";
  if (ORGANIZATION_NOUNS.has(noun)) return "organization";
  if (DATE_NOUNS.has(noun)) return "date";
  if (NUMBER_NOUNS.has(noun)) return "number";
  return "thing";
}

const TYPED_NOUN = (w: string) =>
  PERSON_NOUNS.has(w) ||
  PLACE_NOUNS.has(w) ||
  ORGANIZATION_NOUNS.has(w) ||
  DATE_NOUNS.has(w) ||
  NUMBER_NOUNS.has(w);

/**
 * The head of a noun phrase: its first typed noun before a preposition or a clause, read after its last
 * possessive ("lady catherine's residence" → residence; "the mother of scrooge's nephew" → mother).
 */
function headNoun(phrase: string): string | undefined {
  const ws = phrase
    .replace(/[?!.,;:]/g, " ")
    .split(/\s+/)
    .filter(Boolean);
  const end = ws.findIndex((w) => PHRASE_END.has(w));
  const np = end < 0 ? ws.slice(0, 6) : ws.slice(0, end);
  const owner = np.reduce((at, w, i) => (/['’]s$/.test(w) ? i + 1 : at), 0);
  return np.slice(owner).find(TYPED_NOUN) ?? np.slice(owner).find((w) => NAMED_THINGS.has(w));
}

const PHRASE_END = words(`of in at on to for from with by near about said called named when where that who
  whom which whose did does do is was are were be been like`);

/**
 * The noun a "what is X's N" or "what did X call his N" question asks about, when no noun follows
 * "what" itself: "What is Mr. Bingley's yearly income said to be?" → income.
 */
function askedNoun(q: string): string | undefined {
  const copula = q.match(/^(?:what|which) (?:is|was|are|were) (.+)/)?.[1];
  if (copula && !/^(?:the )?names?\b/.test(copula)) {
    const head = headNoun(copula);
    if (head && TYPED_NOUN(head)) return head;
  }
  const object = q.match(
    /\b(?:call|calls|called|name|named|christen|christened) (?:his|her|their|its|the) (.+)/,
  )?.[1];
  const head = object ? headNoun(object) : undefined;
  return head && TYPED_NOUN(head) ? head : undefined;
}

/** The noun a "which"/"what" question is about: "In which county is…" → county. */
function focusNoun(q: string): string | undefined {
  const m = q.match(/\b(?:which|what)\s+((?:[a-z’'-]+\s+){0,2}?)([a-z’'-]+)\b/);
  if (!m) return undefined;
  const candidates = [...(m[1] ?? "").trim().split(/\s+/).filter(Boolean), m[2] as string];
  for (const word of candidates) {
    if (AUXILIARIES.has(word)) return undefined;
    const bare = word.replace(/['’]s$/, "");
    if (
      PERSON_NOUNS.has(bare) ||
      PLACE_NOUNS.has(bare) ||
      ORGANIZATION_NOUNS.has(bare) ||
      DATE_NOUNS.has(bare) ||
      NUMBER_NOUNS.has(bare) ||
      NAMED_THINGS.has(bare)
    )
      return bare;
  }
  const first = candidates[0];
  return first && !AUXILIARIES.has(first) ? first : undefined;
}

/** After "what"/"which", a verb or pronoun means no noun follows ("what did…", "which was…"). */
const AUXILIARIES = words(`is was are were do does did has have had will would can could should shall
  may might must he she it they we you i his her their its the a an of this that these those`);

const END =
  /\b(?:by|at|towards?|near) the (?:very )?end\b(?: of (?:the|this) \w+)?|\bin the end\b|\bfinally\b|\bultimately\b|\bhow (?:does|did|do) (?:(?:the|this) \w+|it) (?:end|finish|close|conclude)\b|\bthe ending\b(?: of (?:the|this) \w+)?|\bthe conclusion of (?:the|this) (?:story|book|novel|tale)\b/;
const START = /\b(?:at|in) the (?:very )?(?:beginning|start|opening)\b(?: of (?:the|this) \w+)?|\bat first\b/;
const POSITION = new RegExp(`${END.source}|${START.source}`);

function positionCue(q: string): Question["position"] {
  if (END.test(q)) return "end";
  if (START.test(q)) return "start";
  return undefined;
}

/** The stems of a question's terms, for matching against sentence words. */
export function termStems(question: Question): string[] {
  return [...new Set(question.terms.map(stem))];
}
