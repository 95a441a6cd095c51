/**
 * Offline global search for a specific question ("What warning does Victor give about the pursuit of
 * knowledge?"): the passages of the whole index that answer it best (retrieve.ts: BM25 over the units,
 * sentences scored on the question's rarest terms near an answer of the type it asks for) beside the
 * findings of the community reports that match it (BM25). The answer opens with the best passage, or
 * says the text does not say so directly and gives the nearest; then "Also relevant:" the others, each
 * sentence once, each cited with the source that holds it and the reports that repeat it.
 */

import type { SearchGraphStore } from "../stores/graph-store.ts";
import { estimateTokens, idList } from "../text.ts";
import type { Finding, IndexRow, ReportRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer } from "./answer.ts";
import { statements } from "./global-statements.ts";
import type { SearchStores } from "./local-context.ts";
import { answers, leadPassage, namesCandidateFirst, type Passage } from "./passages.ts";
import { NO_DATA_ANSWER } from "./prompts.ts";
import { analyseQuestion } from "./question.ts";
import { retrievePassages } from "./retrieve.ts";
import { ftsMatch, queryTerms, termOverlap } from "./terms.ts";
import { type SourceText, sourceTexts } from "./windows.ts";

/**
 * Report findings added after the passages, beyond maxPoints (they summarise; the passages quote, and a
 * specific question's answer is often a lower-ranked passage, so findings take none of their places).
 */
const FINDINGS = 2;
/** Passages that state the question's subject ("the ocean is …"), added after the best passages. */
const STATEMENTS = 2;
const SPECIFIC_REPORTS = 60;
/** Of the source budget, the share the best units take whole; the rest holds sentence windows. */
const WHOLE_SHARE = 0.5;
/** A term in more than this share of the reports is too common to rank them by. */
const COMMON_SHARE = 0.3;

export async function specificGlobal(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  level: number,
  maxTokens: number,
  maxPoints: number,
): Promise<Answer> {
  const question = analyseQuestion(query);
  const reports = await matchedReports(stores.graph, index, query, level);
  const retrieved = await retrievePassages(stores, index, question, [], { bm25Units: 20, windows: true });
  const flat = (text: string) => text.replace(/\s+/g, " ").trim();
  const contents = reports.map((r) => ({ id: r.human_id, text: flat(r.content) }));
  const holders = (text: string) => contents.filter((c) => c.text.includes(text)).map((c) => c.id);

  const chosen: (OfflinePoint & { sources: number[]; candidate?: string })[] = [];
  const seen = new Set<string>();
  let used = 0;
  const add = (point: OfflinePoint & { sources: number[]; candidate?: string }) => {
    const key = flat(point.key).toLowerCase();
    // Each sentence once: a finding that quotes a passage already given adds its reports to it.
    const twin = chosen.find((c) => flat(c.key).toLowerCase() === key || c.description.includes(point.key));
    if (twin) {
      for (const id of point.reports) if (!twin.reports.includes(id)) twin.reports.push(id);
      return;
    }
    if (seen.has(key)) return;
    const cost = estimateTokens(point.description);
    if (used + cost > maxTokens) return;
    seen.add(key);
    used += cost;
    chosen.push(point);
  };
  const best = leadPassage(retrieved.passages, question);
  const ordered = coverOrder(
    retrieved.passages,
    best,
    question.terms.filter((t) => !question.names.includes(t)),
  );
  const addPassage = (p: Passage) => {
    const text = flat(p.text);
    add({
      description: text,
      key: text,
      score: Math.round(100 * Math.min(1, p.coverage)),
      reports: holders(text),
      sources: [p.unit],
      candidate: answers(p, question) ? p.candidate : undefined,
    });
  };
  for (const p of ordered) {
    if (chosen.length >= maxPoints) break;
    addPassage(p);
  }
  // Beyond maxPoints, like the findings: what the text states its subject is, if not given already.
  for (const p of statements(retrieved.passages, question.terms, STATEMENTS)) addPassage(p);
  const findings = specificPoints(reports, query).sort((a, b) => b.score - a.score);
  let added = 0;
  for (const f of findings) {
    if (added >= FINDINGS) break;
    const before = chosen.length;
    add({ ...f, sources: [] });
    if (chosen.length > before) added++;
  }

  const citedReports = new Set(chosen.flatMap((p) => p.reports));
  const citedSources = new Set(chosen.flatMap((p) => p.sources));
  const data: ContextData = {
    reports: reportRows(reports, citedReports),
    sources: sourceRows(
      sourceTexts(
        retrieved.ranked,
        retrieved.units,
        retrieved.windowed,
        maxTokens * WHOLE_SHARE,
        citedSources,
      ),
      citedSources,
      maxTokens,
    ),
    points: chosen.map((p) => ({ description: p.description, score: p.score })),
  };
  const [lead, ...rest] = chosen;
  if (!lead) return fixedAnswer(data, NO_DATA_ANSWER);
  const confident = best !== undefined && flat(best.text) === lead.key && answers(best, question);
  // A near miss is given as a passage, its next sentence with it (as local search gives one), said once.
  const after = !confident && best?.next && flat(best.text) === lead.key ? flat(best.next) : undefined;
  const nearest = after ? `${lead.description} ${after}` : lead.description;
  const opening = !confident
    ? `The text does not say this directly. The nearest passage is: ${nearest} ${cite(lead)}`
    : lead.candidate && best && namesCandidateFirst(best, lead.description)
      ? `**${lead.candidate}**: ${lead.description} ${cite(lead)}`
      : `${lead.description} ${cite(lead)}`;
  const lines = rest
    .filter((p) => !after || flat(p.key).toLowerCase() !== after.toLowerCase())
    .map((p) => `- ${p.description} ${cite(p)}`);
  return fixedAnswer(
    data,
    lines.length > 0 ? `${opening}\n\nAlso relevant:\n\n${lines.join("\n")}` : opening,
  );
}

/**
 * The lead, then the passages in order of the question's terms they add: first, best ranked first, each
 * passage that holds a term no passage before it holds; then the rest by rank. A question in parts ("What
 * does the creature ask, and how does he see himself?") is answered by sentences about each part, and
 * the best-scored sentences tend to repeat the part their page is most about, so ranking alone fills the
 * answer's places with one part.
 */
export function coverOrder(passages: Passage[], lead: Passage | undefined, terms: string[]): Passage[] {
  if (!lead) return [];
  const holds = (p: Passage) => new Set(terms.filter((t) => termOverlap(p.text, [t]) > 0));
  const covered = holds(lead);
  const first: Passage[] = [lead];
  const later: Passage[] = [];
  for (const p of passages) {
    if (p === lead) continue;
    const fresh = [...holds(p)].filter((t) => !covered.has(t));
    if (fresh.length === 0) {
      later.push(p);
      continue;
    }
    for (const t of fresh) covered.add(t);
    first.push(p);
  }
  return [...first, ...later];
}

function cite(p: { sources: number[]; reports: number[] }): string {
  const refs: string[] = [];
  if (p.sources.length > 0) refs.push(`Sources (${idList(p.sources)})`);
  if (p.reports.length > 0) refs.push(`Reports (${idList(p.reports)})`);
  return `[Data: ${refs.join("; ")}]`;
}

function reportRows(reports: ReportRow[], cited: Set<number>) {
  return reports.map((r) => ({
    id: String(r.human_id),
    title: r.title,
    content: r.content,
    rank: r.rating,
    in_context: cited.has(r.human_id),
  }));
}

/**
 * The passages' units, best first, each as the windows around its passages (windows.ts); those cited
 * and those that fit the budget are in context.
 */
function sourceRows(texts: SourceText[], cited: Set<number>, budget: number) {
  let used = 0;
  return texts.map(({ id, text, tokens }) => {
    const fits = used + tokens <= budget;
    if (fits || cited.has(id)) used += tokens;
    return { id: String(id), text, in_context: fits || cited.has(id) };
  });
}

export interface OfflinePoint {
  description: string;
  score: number;
  reports: number[];
  /** The fact itself, to merge the same sentence found under several findings. */
  key: string;
}

/**
 * The reports that match the question (BM25). A term most reports contain ranks nothing (its weight is
 * near zero) yet costs a score for every one of them, so the match uses the selective terms when there
 * are any.
 */
export async function matchedReports(graph: SearchGraphStore, index: IndexRow, query: string, level: number) {
  const terms = queryTerms(query);
  const selective: string[] = [];
  if (terms.length > 1) {
    for (const t of terms) if ((await graph.reportTermShare(`"${t}"`)) <= COMMON_SHARE) selective.push(t);
  } else selective.push(...terms);
  const match = ftsMatch((selective.length > 0 ? selective : terms).join(" "));
  return match ? graph.matchReports(index, match, level, SPECIFIC_REPORTS) : [];
}

/** A finding as one readable fact: "A and B: what the text says." without its inner citation. */
export function fact(f: Finding): { description: string; key: string } {
  const text = f.explanation.replace(/\s*\[Data:[^\]]*\]\s*$/, "").trim();
  const names = f.summary.split(" and ");
  const description = names.every((n) => text.includes(n)) ? text : `${f.summary}: ${text}`;
  return { description, key: text.slice(0, 160) };
}

/** Specific questions: findings scored by their report's BM25 share and the query words they contain. */
export function specificPoints(reports: ReportRow[], query: string): OfflinePoint[] {
  const terms = queryTerms(query);
  const scoreOf = (r: ReportRow) => (r as ReportRow & { score?: number }).score ?? 0;
  const best = reports[0] ? scoreOf(reports[0]) : 0;
  const points: OfflinePoint[] = [];
  for (const r of reports) {
    const share = best !== 0 ? scoreOf(r) / best : 0; // bm25 is negative: the best is the most negative
    for (const f of JSON.parse(r.findings) as Finding[]) {
      const overlap = termOverlap(`${f.summary} ${f.explanation}`, terms);
      // What the finding itself says counts more than how well its report matched as a whole.
      const text = f.explanation.replace(/\s*\[Data:[^\]]*\]\s*$/, "");
      // A list line or a page-long sentence states a fact worse than a plain sentence.
      const form = (/[.!?]["'’”)_]*$/.test(text) ? 1 : 0.6) * (text.length > 300 ? 0.8 : 1);
      const score = Math.round(
        100 * form * (0.3 * share + 0.7 * Math.min(1, overlap / Math.max(1, terms.length))),
      );
      if (overlap > 0 && score > 0) points.push({ ...fact(f), score, reports: [r.human_id] });
    }
  }
  return points;
}
