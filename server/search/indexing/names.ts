/**
 * Finding names in English prose without a model: word lists and the mention scanner the offline
 * extractor types them with. A name is a run of capitalised words (with "Mr."-style honorifics, and
 * "of" inside figure and institution names such as "Ghost of Christmas Past" or "Bank of England");
 * each mention records the cues around it (an honorific, a speech verb, a locative preposition, an
 * article) that say what kind of thing it names.
 */

export const HONORIFICS = new Map(
  Object.entries({
    mr: "Mr.",
    mrs: "Mrs.",
    ms: "Ms.",
    miss: "Miss",
    dr: "Dr.",
    sir: "Sir",
    lady: "Lady",
    lord: "Lord",
    master: "Master",
    madam: "Madam",
    captain: "Captain",
    colonel: "Colonel",
    governor: "Governor",
    professor: "Professor",
    rev: "Rev.",
    reverend: "Reverend",
    uncle: "Uncle",
    aunt: "Aunt",
  }),
);
/** Honorifics written with a full stop ("Mr.") whose full stop does not end the sentence. */
export const ABBREVIATED = new Set(["mr", "mrs", "ms", "dr", "rev", "st", "messrs"]);

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

export const ORGANIZATION_WORDS = words(
  `Company Co Bank Society Corporation Firm Inc Ltd Church Parliament Council Committee University College
   Institute Institution Association Union Ministry Department Party Guild Exchange Army Navy Assembly Court
   Gazette Journal Times Chronicle Magazine Review Press Post Herald Mercury Library Academy School Hospital
   Club Lodge Congress Senate House Office Board Trust Foundation Museum Theatre Theater Railway Mint`,
);
export const PLACE_WORDS = words(
  `Street Lane Road Square Hill City Town Court Park River Bridge Market Yard Row Place Alley Village County
   Island Isle Bay Sea Ocean Mountain Mountains Valley Lake Forest Coast Harbour Harbor Province Colony State
   Kingdom Fields Green Gate Wharf Abbey Cathedral Castle Palace Hall Moor Downs Creek Fort Point Cape`,
);
/** Places a reader expects to be recognised without a cue. */
export const GAZETTEER = words(
  `England London France Paris Scotland Ireland Wales Britain America Europe Africa Asia India China Rome
   Italy Spain Germany Holland Russia Egypt Boston Philadelphia Pennsylvania York Jersey Virginia Maryland
   Carolina Massachusetts Connecticut Canada Mexico Dublin Edinburgh Camden Cornhill Westminster Thames
   Greenwich Oxford Cambridge Bristol Liverpool Manchester Lisbon Madrid Vienna Berlin Amsterdam`,
);
/** Days and months: typed as events (a date is when something happens), though no story is about one. */
export const DATE_WORDS = words(
  `Sunday Monday Tuesday Wednesday Thursday Friday Saturday January February March April May June July
   August September October November December`,
);
/** The days and months that are no given name or common word too ("May", "June", "March" are). */
const DATE_PREFIXES = new Set([...DATE_WORDS].filter((w) => !/^(?:March|April|May|June|August)$/.test(w)));
export const EVENT_WORDS = new Set([
  ...DATE_WORDS,
  ...words(
    "Christmas Easter Whitsun Michaelmas Eve Day Year War Battle Festival Feast Revolution Fair Carnival Coronation",
  ),
]);
/** Personified figures: characters though they take an article ("the Ghost", "the Spirit"). */
export const FIGURE_WORDS = words("Ghost Spirit Phantom Spectre Spectres Spirits Ghosts Apparition");
/** Heads after which "of" continues a name ("Ghost of Christmas Past", "Bank of England"). */
const OF_HEADS = new Set([
  ...FIGURE_WORDS,
  ...ORGANIZATION_WORDS,
  ..."Duke Earl King Queen Prince Princess Count Countess Bishop Archbishop Lord Lady Isle Island City Cape Tower Battle".split(
    " ",
  ),
]);
/** Capitalised words that are never names: book furniture, interjections, exclamations to the divine. */
export const NOT_NAMES = words(
  `Illustration Illustrations Tailpiece Heading List Chapter Stave Book Part Volume Contents Preface Footnote
   Note Fig Figure English French Dutch Spanish German Italian Irish Scotch Scottish Welsh American Christian
   Jewish Roman Greek Latin Oh Ah Ha Hallo Halloa Yes No Well Why God Heaven Heavens Amen Alas Hurrah Bah Humbug Ho Eh Aye
   Nay Hey Lo Pshaw Whoop Yo Thankee The A An And But Or If It I`,
);
/** Forms of address, which alone name nobody (a title said alone may: "the Captain", "Uncle"). */
const ADDRESSES = words("Sir Madam Madame Mister Monsieur Mademoiselle Signor Signora");
export const SPEECH_VERBS = words(
  `said says say cried cries returned replied replies asked asks exclaimed observed answered repeated
   rejoined muttered whispered continued added pursued resumed inquired enquired demanded urged thought
   shouted called sighed laughed murmured remarked interposed retorted growled declared began`,
);
/** Prepositions before a place; "to", "at" and "from" are left out: people take them as often. */
export const LOCATIVES = words("in into near within throughout towards toward across inside outside beyond");
const ARTICLES = words("the a an this that");
/** Lower-case words just before a person's name ("poor Bob", "old Fezziwig", "little Fan"). */
const PERSON_ADJECTIVES = words("poor old young little dear good kind");

export type Cue = "honorific" | "speech" | "locative" | "article" | "adjective";

export interface NameMention {
  /** The name as written, honorific included and possessive dropped ("Mr. Fezziwig"). */
  name: string;
  /** The name's words without the honorific. */
  core: string[];
  honorific?: string;
  cues: Cue[];
  /** At a sentence or quotation start, where capitalisation says nothing. */
  atStart: boolean;
}

/** How often each word appears in lower case, capitalised, and capitalised mid-sentence. */
export type CaseStats = Map<string, { lower: number; upper: number; inside: number }>;

export function caseStats(text: string): CaseStats {
  return scanCases(text).stats;
}

/**
 * One text's case counts in a compact form, with what joining it to other texts changes: the key of its
 * first word when that word is capitalised with only blanks before it (joined after a text ending
 * mid-sentence, it counts as capitalised inside one), and its last character that is not a blank.
 */
export interface CasePart {
  keys: string[];
  /** lower, upper, inside for each key, in turn. */
  counts: Uint32Array;
  first?: string;
  last: number;
}

export function casePart(text: string): CasePart {
  const { stats, first } = scanCases(text);
  const keys = [...stats.keys()];
  const counts = new Uint32Array(keys.length * 3);
  for (const [i, key] of keys.entries()) {
    const entry = stats.get(key) as { lower: number; upper: number; inside: number };
    counts[i * 3] = entry.lower;
    counts[i * 3 + 1] = entry.upper;
    counts[i * 3 + 2] = entry.inside;
  }
  let end = text.length - 1;
  while (end >= 0 && isBlank(text.charCodeAt(end))) end--;
  return { keys, counts, first, last: end >= 0 ? text.charCodeAt(end) : -1 };
}

/**
 * `caseStats(texts.join("\n"))` from each text's part, so a caller that keeps the parts of texts it sees
 * again (the passage scorer's units) never rescans them. Same counts, same key order.
 */
export function joinCases(parts: CasePart[]): CaseStats {
  const stats: CaseStats = new Map();
  let before = -1;
  for (const part of parts) {
    for (const [i, key] of part.keys.entries()) {
      const lower = part.counts[i * 3] as number;
      const upper = part.counts[i * 3 + 1] as number;
      const inside = part.counts[i * 3 + 2] as number;
      const entry = stats.get(key);
      if (entry) {
        entry.lower += lower;
        entry.upper += upper;
        entry.inside += inside;
      } else stats.set(key, { lower, upper, inside });
    }
    if (part.first !== undefined && continuesSentence(before)) {
      const entry = stats.get(part.first);
      if (entry) entry.inside++;
    }
    if (part.last !== -1) before = part.last;
  }
  return stats;
}

function scanCases(text: string): { stats: CaseStats; first?: string } {
  // A hand-written scan of /[A-Za-z][A-Za-z'’]*/g without a trailing possessive (' ’ 's ’s): the
  // regex's match objects and a replace per word were a fifth of offline indexing.
  const stats: CaseStats = new Map();
  let first: string | undefined;
  let opening = true;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(i);
    if (!isLetter(code)) {
      if (!isBlank(code)) opening = false;
      i++;
      continue;
    }
    const start = i++;
    while (i < n && (isLetter(text.charCodeAt(i)) || isApostrophe(text.charCodeAt(i)))) i++;
    let end = i;
    if (isApostrophe(text.charCodeAt(end - 1))) end--;
    else if (text.charCodeAt(end - 1) === 115 && end - start > 2 && isApostrophe(text.charCodeAt(end - 2)))
      end -= 2;
    const key = text.slice(start, end).toLowerCase();
    let entry = stats.get(key);
    if (!entry) {
      entry = { lower: 0, upper: 0, inside: 0 };
      stats.set(key, entry);
    }
    if (code >= 97) entry.lower++;
    else {
      entry.upper++;
      if (opening) first = key;
      else if (midSentence(text, start)) entry.inside++;
    }
    opening = false;
  }
  return { stats, first };
}

const isBlank = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
/** A lower-case letter, a comma or a semicolon: what a capitalised word after it continues. */
const continuesSentence = (c: number) => (c >= 97 && c <= 122) || c === 44 || c === 59;

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isApostrophe = (c: number) => c === 39 || c === 0x2019;

/** Whether the text before `at` continues a sentence (a lower-case word or a comma before the gap). */
function midSentence(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && isBlank(text.charCodeAt(i))) i--;
  if (i < 0 || i === at - 1) return false;
  return continuesSentence(text.charCodeAt(i));
}

/** A word the document mostly writes in lower case ("Good", "Old", "Present"): capitalised only at a start. */
export function isCommonWord(word: string, stats: CaseStats): boolean {
  const seen = stats.get(word.toLowerCase());
  return seen !== undefined && seen.lower >= seen.upper;
}

const TOKEN = /[A-Za-z][A-Za-z'’-]*|[^\sA-Za-z]/g;

/** The names one sentence mentions, in order, with their cues. */
export function mentionsIn(sentence: string, stats: CaseStats): NameMention[] {
  const tokens = sentence.match(TOKEN) ?? [];
  const out: NameMention[] = [];
  let start = true; // at a sentence or quotation start, where any word is capitalised
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (!isCapitalised(token)) {
      if (/^[A-Za-z]/.test(token)) start = false;
      else if (/["“‘(:;!?]/.test(token) || (token === "'" && !/[A-Za-z]/.test(tokens[i - 1] ?? "")))
        start = true;
      continue;
    }
    const first = i;
    let honorific: string | undefined;
    const lower = token.toLowerCase();
    if (HONORIFICS.has(lower) && isCapitalised(tokens[i + 1 + (tokens[i + 1] === "." ? 1 : 0)] ?? "")) {
      honorific = HONORIFICS.get(lower);
      i += tokens[i + 1] === "." ? 2 : 1;
    }
    const core: string[] = [];
    let possessive = false;
    for (; i < tokens.length; i++) {
      const word = tokens[i] as string;
      if (isCapitalised(word)) {
        const bare = word.replace(/['’]s?$/, "");
        core.push(bare);
        if (bare !== word) {
          possessive = true;
          break;
        }
        if (ABBREVIATED.has(bare.toLowerCase()) && tokens[i + 1] === ".") i++;
      } else if (
        word === "of" &&
        OF_HEADS.has(core.at(-1) ?? "") &&
        isCapitalised(tokens[i + 1] ?? "") &&
        !NOT_NAMES.has(tokens[i + 1] as string)
      ) {
        core.push("of");
      } else break;
    }
    const end = possessive ? i + 1 : i;
    i = end - 1;
    const atStart = start && !honorific;
    const mention = nameOf(core, honorific, start, stats);
    start = false;
    if (!mention) continue;
    const before = (tokens[first - 1] ?? "").toLowerCase();
    const after = (tokens[end] === "," ? tokens[end + 1] : tokens[end]) ?? "";
    const cues: Cue[] = [];
    if (honorific) cues.push("honorific");
    if (SPEECH_VERBS.has(before) || SPEECH_VERBS.has(after.toLowerCase())) cues.push("speech");
    if (LOCATIVES.has(before)) cues.push("locative");
    if (ARTICLES.has(before)) cues.push("article");
    if (PERSON_ADJECTIVES.has(before)) cues.push("adjective");
    out.push({ ...mention, cues, atStart });
  }
  return out;
}

function nameOf(
  words: string[],
  honorific: string | undefined,
  atStart: boolean,
  stats: CaseStats,
): Omit<NameMention, "cues" | "atStart"> | undefined {
  const core = words.filter((w) => w.length > 0);
  while (core.at(-1) === "of") core.pop();
  // "Scrooge Scrooge" (a name repeated across a line break) is one mention.
  while (core.length > 1 && core[0] === core[1]) core.shift();
  // Headings and shouting ("STAVE ONE", "MARLEY'S GHOST") are not mentions.
  if (core.some((w) => w.length > 1 && w === w.toUpperCase())) return undefined;
  // "Old Jacob Marley", "Whereat Scrooge": leading words the document mostly writes in lower case are not
  // part of the name; nor is a sentence's first word unless the document capitalises it elsewhere too.
  while (core.length > 1 && !honorific && notPartOfName(core[0] as string, atStart, stats)) core.shift();
  // "On Saturday Pell drove…", "in October Nell sold…": a day or month before a name is no part of it
  // ("Christmas Eve", "Easter Monday" and "May Bartram" keep theirs).
  while (
    core.length > 1 &&
    !honorific &&
    DATE_PREFIXES.has(core[0] as string) &&
    !EVENT_WORDS.has(core[1] as string)
  )
    core.shift();
  // "Sir," "Madame": a form of address said alone names nobody.
  if (core.length === 1 && !honorific && ADDRESSES.has(core[0] as string)) return undefined;
  // Contractions ("I'll") and lower-case compounds ("Christmas-time") are words, not names.
  if (
    core.length === 0 ||
    core.some((w) => NOT_NAMES.has(w) || (w.length < 2 && w !== "of") || /['’]|-[a-z]/.test(w))
  )
    return undefined;
  if (
    core.length === 1 &&
    !honorific &&
    (isCommonWord(core[0] as string, stats) ||
      (atStart &&
        !seenInside(core[0] as string, stats) &&
        !(thin(stats) && GAZETTEER.has(core[0] as string))))
  )
    return undefined;
  return { name: honorific ? `${honorific} ${core.join(" ")}` : core.join(" "), core, honorific };
}

/**
 * A leading word of a capitalised run is not part of the name when the document writes it in lower case,
 * or it opens a sentence and is capitalised nowhere else. A short note ("Ada Lovelace worked with Charles
 * Babbage in London.") has no elsewhere: there a sentence's first word is part of the name unless it is a
 * word that opens sentences ("When Ada…", "Yesterday Ada…").
 */
function notPartOfName(word: string, atStart: boolean, stats: CaseStats): boolean {
  if (isCommonWord(word, stats)) return true;
  if (!atStart || seenInside(word, stats)) return false;
  return !thin(stats) || OPENING_WORDS.has(word.toLowerCase());
}

/** Fewer words than this and a document's case statistics say too little to doubt a sentence's start. */
const THIN_WORDS = 400;
const totals = new WeakMap<CaseStats, number>();

function thin(stats: CaseStats): boolean {
  let total = totals.get(stats);
  if (total === undefined) {
    total = 0;
    for (const entry of stats.values()) total += entry.lower + entry.upper;
    totals.set(stats, total);
  }
  return total < THIN_WORDS;
}

/** Words that open English sentences without being names: articles, pronouns, conjunctions, adverbs. */
const OPENING_WORDS = new Set(
  `a an the this that these those there here then when while where whereat whereas what which who whom whose why
   how if although though because since after before until unless once as so but and or nor yet for of in on at
   by with from to into onto upon about above below under over between among through during without within
   i he she it we they you me him her us them my his its our their your mine yours ours theirs one some any
   every each all both no not never always often sometimes perhaps maybe yesterday today tomorrow tonight
   now later soon still also even just only indeed however thus hence meanwhile moreover furthermore finally
   first next last dear oh ah well yes good old young little great poor
   is was are were be been being do does did have has had will would shall should can could may might must
   let said says see look`.split(/\s+/),
);

/** The document capitalises the word mid-sentence somewhere: a sentence start alone does not explain it. */
function seenInside(word: string, stats: CaseStats): boolean {
  return (stats.get(word.toLowerCase())?.inside ?? 0) > 0;
}

function isCapitalised(token: string): boolean {
  const c = token.charCodeAt(0);
  return c >= 65 && c <= 90;
}
