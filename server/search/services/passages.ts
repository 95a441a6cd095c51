/**
 * Passage scoring, shared by local search (which sources go into the context, and the offline answer's
 * opening) and offline global search (the passages beside the community reports).
 *
 * Every sentence of the candidate text units is scored on the question's terms, each weighted by how rare
 * it is in the index (a word in every unit says little; the rarest word of the question says most), with
 * the neighbouring sentences counting a third; then a sentence that holds a candidate of the type the
 * question asks for (a person, a place, a date, a number… that the question does not already name;
 * candidates.ts finds them) gains. `coverage` is the share of the question's weighted content terms (its
 * names aside: they find the passage, `named` says whether it is about them) a sentence holds, which the
 * answerers use to tell an answer from a near miss.
 */
import { candidateFinder, type NameTypes } from "./candidates.ts";
import { creditsIn } from "./credits.ts";
import { definitionTest } from "./definition.ts";
import type { Question } from "./question.ts";
import { relationStems, statesRelation } from "./relation.ts";
import { speakerTest } from "./speaker.ts";
import { stem } from "./terms.ts";
import { unitWords } from "./unit-words.ts";

export interface PassageUnit {
  id: number;
  text: string;
  /** Where the unit sits in its document, 0 (start) to 1 (end), when known. */
  position?: number;
}

export interface Passage {
  text: string;
  unit: number;
  score: number;
  /** Share of the question's weighted terms this sentence (and a third of its neighbours) holds. */
  coverage: number;
  /** The candidate answer of the wanted type this sentence holds, if any. */
  candidate?: string;
  /** Candidates that were only guessed (an untyped name): weaker evidence. */
  weak?: boolean;
  /** The sentence or a neighbour names someone or something the question names. */
  named: boolean;
  order: number;
  /** The sentence after it in its unit, if any (a near miss is given with it). */
  next?: string;
  /** A line of credit ("Author: …", "by …") answering "Who wrote this book?": its candidate is the author. */
  credit?: boolean;
}

/**
 * One term of the question: its weight in (0, 1] (the rarest term of the question 1) and the stems that
 * count for it (its own 1, an everyday equivalent less).
 */
export interface TermGroup {
  term: string;
  name: boolean;
  weight: number;
  stems: Map<string, number>;
}

/** idf = ln(1 + N / df), scaled so the rarest term any unit holds is 1; a name counts half. */
export function termGroups(
  terms: { term: string; df: number; name?: boolean; related?: string[] }[],
  units: number,
): TermGroup[] {
  const idf = (df: number) => Math.log(1 + Math.max(1, units) / Math.max(1, df));
  const top = Math.max(0, ...terms.filter((t) => t.df > 0).map((t) => idf(t.df)));
  return terms.map((t) => {
    const stems = new Map([[stem(t.term), 1]]);
    for (const r of t.related ?? []) if (!stems.has(stem(r))) stems.set(stem(r), RELATED);
    const weight = top > 0 ? Math.min(1, idf(t.df) / top) : 1;
    return { term: t.term, name: t.name === true, weight: weight * (t.name ? NAME : 1), stems };
  });
}

const NAME = 0.5;
const RELATED = 0.7;

/** A passage holding less of the question's weighted terms than this is a near miss, said as such. */
const CONFIDENT_COVERAGE = 0.5;

/**
 * Whether a passage answers the question rather than comes near it: it holds most of the question's
 * weighted terms and, when the question wants a person, place, date, number or name, a fitting one.
 */
export function answers(p: Passage, question: Question): boolean {
  const typed = question.type !== "thing" || question.wantsName;
  return (
    p.coverage >= CONFIDENT_COVERAGE &&
    (!typed || (p.candidate !== undefined && !p.weak)) &&
    // "Who wrote this book?" is answered by a line of credit, not by an author the story mentions.
    (!question.authorship || p.credit === true) &&
    (question.names.length === 0 || p.named)
  );
}

/**
 * The passage an answer opens with: the best that answers the question when one scores near the best
 * (a sentence naming a fitting candidate beats a closer match that names none), else the best, which
 * the answerers give as a near miss.
 */
export function leadPassage(passages: Passage[], question: Question): Passage | undefined {
  const best = passages[0];
  if (!best) return undefined;
  // A heading or a list of captions is no answer, however many fitting names it holds.
  const said = (p: Passage) => /[.!?]["'’”)_]*$/.test(p.text);
  return (
    passages.find(
      (p) => p.score >= LEAD_MARGIN * best.score && (said(p) || p.credit === true) && answers(p, question),
    ) ?? best
  );
}

/**
 * Whether an answer opening with this passage (quoted as `quoted`) names its candidate first ("**Walrus**:
 * So it was…"): when the sentence is long, or is a line of credit, whose name is the answer whatever else
 * it says.
 */
export function namesCandidateFirst(p: Passage, quoted = p.text): boolean {
  return p.candidate !== undefined && (quoted.length > LONG_SENTENCE || p.credit === true);
}

/** Longer than this, the opening names the candidate before quoting the sentence. */
const LONG_SENTENCE = 160;

/** A passage that answers may open the answer when it scores at least this share of the best. */
const LEAD_MARGIN = 0.5;

const NEIGHBOUR = 0.33;
const PAGE = 0.25;
const TYPE_BONUS = 0.6;
const WEAK_BONUS = 0.3;
const RELATION_BONUS = 0.6;
const DEFINITION_BONUS = 1;
const CREDIT_BONUS = 2;
const SPEAKER_BONUS = 0.6;
/** A name the question writes, met in lower case ("the park" for "Netherfield Park"): a common word, mostly. */
const LOWER = 0.3;
const MIN_CHARS = 20;

export async function scorePassages(
  units: PassageUnit[],
  question: Question,
  groups: TermGroup[],
  typesOf: NameTypes,
  limit = 40,
  further = 0,
): Promise<Passage[]> {
  const content = groups.some((g) => !g.name) ? groups.filter((g) => !g.name) : groups;
  const total = content.reduce((sum, g) => sum + g.weight, 0) || 1;
  const definition = definitionTest(question);
  const speaks = speakerTest(question);
  const raw: Passage[] = [];
  const credits = new Map<Passage, string>();
  const seen = new Set<string>();
  let order = 0;
  for (const unit of units) {
    const { list, bags, whole, capitals, wholeCapitals } = unitWords(unit.text);
    const credited = question.authorship ? creditsIn(unit.text) : [];
    // A name the question writes matches the name, not the common word ("Netherfield Park", not "the park"):
    // met in lower case it counts a little, so a question in Title Case still finds its verbs.
    const bagsOf = (g: TermGroup) => (g.name ? capitals : bags);
    const edge = question.position ? along(bags, groups, question.position) : undefined;
    for (const [i, sentence] of list.entries()) {
      const text = sentence.trim();
      // "Who wrote this book?": a line of credit ("Author: …", "by …") answers, whatever its words and length.
      const flat = question.authorship ? text.replace(/\s+/g, " ") : "";
      const credit = credited.find((c) => flat.includes(c.line))?.name;
      if ((text.length < MIN_CHARS && !credit) || seen.has(text)) continue;
      // A unit cut at a line of a hard-wrapped book opens with a sentence's tail ("nothing ever happened
      // on this globe…"), whose head is in the unit before: no passage to quote.
      if (i === 0 && unit.position !== 0 && /^\p{Ll}/u.test(text)) continue;
      seen.add(text);
      const bag = bags[i] as Set<string>;
      let own = 0;
      let near = 0;
      let covered = 0;
      let far = 0;
      let held = 0;
      for (const g of groups) {
        const cased = bagsOf(g);
        const here = g.name ? Math.max(matchIn(cased[i], g), LOWER * matchIn(bag, g)) : matchIn(bag, g);
        const around = here > 0 ? 0 : Math.max(matchIn(cased[i - 1], g), matchIn(cased[i + 1], g));
        // A term elsewhere on the page: the page is about it, the sentence may answer it in other words
        // ("He was an old Wellfleet oysterman…" then, lines on, "I am eighty-eight year old.").
        const page = here > 0 || around > 0 ? 0 : matchIn(g.name ? wholeCapitals : whole, g);
        own += here;
        near += around;
        if (!g.name) far += page;
        if (content.includes(g)) covered += here + NEIGHBOUR * around + PAGE * page;
        if (here > 0) held++;
      }
      // The passage is about what the question names when the sentence or one near it names it.
      const named = groups.some(
        (g) => g.name && [-2, -1, 0, 1, 2].some((d) => matchIn(capitals[i + d], g) > 0),
      );
      // "How does the story end?" has no terms: on the story's last (or first) pages every sentence is about it.
      const ending =
        groups.length === 0 &&
        unit.position !== undefined &&
        (question.position === "end"
          ? unit.position >= EDGE
          : question.position === "start" && unit.position <= 1 - EDGE);
      if (own === 0 && !ending && !credit) continue;
      let score = own + NEIGHBOUR * near + PAGE * far + form(text);
      // "How does the author describe X?": the sentence saying what X is answers it in its own words.
      const defines = definition?.(text) === true;
      if (defines) score += DEFINITION_BONUS;
      if (credit) score += CREDIT_BONUS;
      // "What does Scrooge think of Christmas?": what Scrooge says of it ("…,' said Scrooge"), not
      // whatever he says ("'I do,' said Scrooge": the speaker's is the only term it holds).
      if (held > 1 && speaks?.(text)) score += SPEAKER_BONUS;
      if (question.position && unit.position !== undefined)
        score +=
          edgeBonus(question.position === "end" ? unit.position : 1 - unit.position) * (edge?.(i) ?? 1);
      raw.push({
        text,
        unit: unit.id,
        score,
        // A question with no terms asks nothing a sentence could cover only in part.
        coverage: defines || credit || groups.length === 0 ? 1 : covered / total,
        order: order++,
        named,
        next: list[i + 1]?.trim(),
      });
      if (credit) credits.set(raw.at(-1) as Passage, credit);
    }
  }
  raw.sort((a, b) => b.score - a.score || a.order - b.order);
  const top = raw.slice(0, limit * 2);
  await addCandidates(top, question, typesOf, units);
  // A line of credit's name is the answer, whatever else the line holds.
  for (const [p, name] of credits) Object.assign(p, { candidate: name, weak: false, credit: true });
  top.sort((a, b) => b.score - a.score || a.order - b.order);
  // `further` beyond the first `limit` (the same either way): the sentences a context gives as windows.
  const kept = [...top, ...raw.slice(limit * 2, limit + further)];
  return kept.slice(0, limit + further);
}

/**
 * Within a page at the edge, how near the story's edge a sentence is (0.5 to 1): the story ends with the
 * page's last sentence about the question (its names, else its terms), not with a licence printed after.
 */
function along(bags: Set<string>[], groups: TermGroup[], position: "start" | "end"): (i: number) => number {
  // "How does the story end?" asks for its last sentences: each sentence further from the edge a little less.
  if (groups.length === 0) {
    const last = bags.length - 1;
    return (i) => Math.max(0.5, 1 - SENTENCE_STEP * (position === "end" ? last - i : i));
  }
  const key = groups.some((g) => g.name) ? groups.filter((g) => g.name) : groups;
  const about = bags.flatMap((bag, k) => (key.some((g) => matchIn(bag, g) > 0) ? [k] : []));
  const first = about[0] ?? 0;
  const last = about.at(-1) ?? bags.length - 1;
  if (position === "end") return (i) => (i > last ? 0.5 : 0.5 + 0.5 * (last > 0 ? i / last : 1));
  const span = bags.length - 1 - first;
  return (i) => (i < first ? 0.5 : 0.5 + 0.5 * (span > 0 ? (bags.length - 1 - i) / span : 1));
}

const SENTENCE_STEP = 0.02;

/** Where a document's last tenth starts. */
const EDGE = 0.9;

/** "By the end of the story": the last tenth of a document, the closer to its edge the more. */
function edgeBonus(position: number): number {
  return position < EDGE ? 0 : (position - EDGE) * 10;
}

/** The weight a term group earns in a bag of stems: its best stem's. */
function matchIn(bag: Set<string> | undefined, g: TermGroup): number {
  if (!bag) return 0;
  let best = 0;
  for (const [s, factor] of g.stems) if (factor > best && bag.has(s)) best = factor;
  return best * g.weight;
}

/** A question, or a quoted question with its attribution ("'What is his name?' asked Mr. Bennet."). */
function asks(text: string): boolean {
  return /\?["'’”)_]*$/.test(text) || /\?["'’”)]+\s+\p{Ll}[^"'“‘’”?!.]*\.?$/u.test(text);
}

/** A complete, readable sentence states a fact better than a question, a heading or a page-long list. */
function form(text: string): number {
  let score = 0;
  if (asks(text)) score -= 0.5;
  else if (!/[.!;]["'’”)_]*$/.test(text)) score -= 0.4;
  // "said Bob, with a sudden declension…": the tail of a quotation.
  if (/^[a-z]/.test(text)) score -= 0.2;
  // "Alphonse Frankenstein.", "The Wellfleet Oysterman VI.": a signature or a heading, every word capitalised.
  else if ((text.match(/\p{L}+/gu) ?? []).every((word) => /^\p{Lu}/u.test(word))) score -= 0.4;
  // "+-----+ |Transcriber's note: …": a table's rules around a line are no sentence of the book.
  if (/[-=_*~+]{5,}/.test(text)) score -= 0.5;
  if (text.length > 350) score -= 0.2;
  if (text.length > 600) score -= 0.3;
  return score;
}

/**
 * Finds in each sentence a candidate of the wanted type that the question does not already name. A
 * sentence that asks ("Have you had many brothers, Spirit?") may be answered by the next one ("More than
 * eighteen hundred," said the Ghost): then the passage is both.
 */
async function addCandidates(
  passages: Passage[],
  question: Question,
  typesOf: NameTypes,
  units: PassageUnit[],
) {
  const type = question.type;
  if (type === "thing" && !question.wantsName) return;
  const asked = new Set(question.terms.map(stem));
  const finder = await candidateFinder(question, asked, typesOf, units, passages);
  const rel = relationStems(question);
  for (const p of passages) {
    let found = finder(p.text);
    if (!found && p.next && asks(p.text)) {
      found = finder(p.next);
      if (found) {
        p.text = `${p.text} ${p.next}`;
        p.next = undefined;
      }
    }
    if (!found) continue;
    p.candidate = found.name;
    p.weak = !found.strong;
    p.score += found.strong ? TYPE_BONUS : WEAK_BONUS;
    // "Charlotte, the wife of Mr. Collins": the sentence states the asked relation, not a chance meeting.
    if (found.strong && statesRelation(p.text, found.name, question, rel)) p.score += RELATION_BONUS;
  }
}
