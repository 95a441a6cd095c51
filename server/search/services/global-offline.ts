/**
 * Global search without a model: GraphRAG's map and reduce done extractively.
 *
 * Map: every community report in play yields points (its findings, each a fact from the text with the
 * entities it ties together), scored 0–100 for how much they help answer the question. Reduce: the best
 * points, deduplicated, become an answer that opens by naming what the question asks for and then lists
 * the facts, each cited [Data: Reports (ids)].
 *
 * A broad question ("What are the main themes?", "Who are the main characters?", "What is this about?")
 * names nothing to look up: like GraphRAG it is answered from the top-level communities, the most
 * important first, and opens with the leading characters, places and recurring subjects. A specific
 * question maps over the reports that match it (BM25) at the requested level. "Unable to answer" is
 * left for an index with nothing that relates to the question at all.
 */
import { DATE_WORDS } from "../indexing/names.ts";
import type { SearchGraphStore } from "../stores/graph-store.ts";
import { escapeRegExp, estimateTokens, idList, sentencesAbout } from "../text.ts";
import type { EntityRow, Finding, IndexRow, ReportRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer } from "./answer.ts";
import { asksAuthorship } from "./credits.ts";
import { fact, type OfflinePoint, specificGlobal } from "./global-specific.ts";
import type { SearchStores } from "./local-context.ts";
import { asksNarrator, narratorAnswer } from "./narrator.ts";
import { NO_DATA_ANSWER } from "./prompts.ts";
import { queryTerms } from "./terms.ts";

/** Words that ask about the whole material rather than something in it. */
const BROAD_WORDS = new Set(
  `main key central major important principal chief leading primary overall general whole theme themes
   topic topics subject subjects story stories book books text texts document documents material corpus
   plot summary summarise summarize overview gist characters character people persons figures places
   setting settings happen happens happened idea ideas message point points lesson lessons moral novel novels
   novella essay essays tale tales narrative narratives work works poem poems play plays piece account
   author authors writer place take takes set located action give tell list describe explain summarise
   summarize sum protagonist protagonists`.split(/\s+/),
);
const BROAD_REPORTS = 30;
const LEADING = 6;

/** "lead": one main character asked for ("Who is the main character?", "Who is the protagonist?"). */
export type Broad = "lead" | "people" | "places" | "themes";

/** Whether a question is broad, and what it asks about; undefined for a specific question. */
export function broadQuestion(query: string): Broad | undefined {
  // "Who is the author?" names one person, whom the front matter credits (credits.ts).
  if (asksAuthorship(query)) return undefined;
  const terms = queryTerms(query);
  if (!terms.every((t) => BROAD_WORDS.has(t))) return undefined;
  const q = query.toLowerCase();
  if (/\b(?:(?:main|central|principal|chief|leading) character|protagonist)\b(?!s)/.test(q)) return "lead";
  if (/\b(who|characters?|people|persons|figures)\b/.test(q)) return "people";
  // "When does the story take place?" asks for a time: what the material centres on says its events.
  if (/\bwhen\b/.test(q)) return "themes";
  if (/\b(where|places?|settings?)\b/.test(q)) return "places";
  return "themes";
}

export async function offlineGlobal(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  level: number,
  maxTokens: number,
  maxPoints: number,
): Promise<Answer> {
  if (asksNarrator(query)) {
    const told = await narratorAnswer(stores, index);
    if (told) return told;
  }
  const broad = broadQuestion(query);
  if (!broad) return specificGlobal(stores, index, query, level, maxTokens, maxPoints);
  const { graph } = stores;
  const reports = await graph.topReports(index, 0, BROAD_REPORTS);
  const chosen = choose(broadPoints(reports), maxPoints, maxTokens);
  const cited = new Set(chosen.flatMap((p) => p.reports));
  const data: ContextData = {
    reports: reports.map((r) => ({
      id: String(r.human_id),
      title: r.title,
      content: r.content,
      rank: r.rating,
      in_context: cited.has(r.human_id),
    })),
    points: chosen.map((p) => ({ description: p.description, score: p.score })),
  };
  if (chosen.length === 0) return fixedAnswer(data, NO_DATA_ANSWER);
  const said = chosen.map((p) => p.description);
  const opening = await broadOpening(graph, index, broad, reports, cited, said);
  const lines = chosen.map((p) => `- ${p.description} [Data: Reports (${idList(p.reports)})]`);
  const heading = "What the material says, community by community:";
  return fixedAnswer(data, lines.length > 0 ? `${opening}\n\n${heading}\n\n${lines.join("\n")}` : opening);
}

/** Broad questions: every top-level report counts, the most important first, its findings in order. */
function broadPoints(reports: ReportRow[]): OfflinePoint[] {
  const top = Math.max(...reports.map((r) => r.rating), 1);
  const points: OfflinePoint[] = [];
  for (const r of reports) {
    // One point per community: its summary's lead fact, then its strongest finding.
    const [first] = JSON.parse(r.findings) as Finding[];
    const summary = r.summary
      .replace(/^This community has [^.]*\.\s*/, "")
      .replace(/\s*Recurring words: [^.]*\./, "")
      .trim();
    // The lead fact is often the finding's own sentence: said once.
    const finding = first ? fact(first) : undefined;
    const adds = finding && !summary.includes(finding.key);
    const description = `${r.title}: ${summary}${adds ? ` ${finding.description}` : ""}`.trim();
    points.push({
      description,
      score: Math.max(1, Math.round((100 * r.rating) / top)),
      reports: [r.human_id],
      key: description,
    });
  }
  return points;
}

/** The best points that fit, each fact once (the same sentence backs several findings). */
function choose(points: OfflinePoint[], maxPoints: number, maxTokens: number): OfflinePoint[] {
  points.sort((a, b) => b.score - a.score);
  const chosen: OfflinePoint[] = [];
  const seen = new Map<string, OfflinePoint>();
  let used = 0;
  for (const p of points) {
    if (chosen.length >= maxPoints) break;
    const twin = seen.get(p.key);
    if (twin) {
      for (const id of p.reports) if (!twin.reports.includes(id)) twin.reports.push(id);
      continue;
    }
    const cost = estimateTokens(p.description);
    if (used + cost > maxTokens) break;
    seen.set(p.key, p);
    chosen.push(p);
    used += cost;
  }
  return chosen;
}

/** Names what a broad question asks for: the leading characters, places, and recurring subjects. */
async function broadOpening(
  graph: SearchGraphStore,
  index: IndexRow,
  broad: Broad,
  reports: ReportRow[],
  cited: Set<number>,
  said: string[],
): Promise<string> {
  const people = await graph.leadingEntities(index, "person", LEADING);
  const places = await graph.leadingEntities(index, "geo", 3);
  // "Around Saturday and October" says nothing: a bare day or month is a date, not what a story is about.
  const events = (await graph.leadingEntities(index, "event", LEADING))
    .filter((e) => !e.name.split(/\s+/).every((w) => DATE_WORDS.has(w)))
    .slice(0, 2);
  const cite = (entities: EntityRow[]) => {
    const ids = reportsOf(entities, reports);
    for (const id of ids) cited.add(id);
    const refs = [`Reports (${idList(ids.length > 0 ? ids : [...cited])})`];
    if (entities.length > 0) refs.push(`Entities (${idList(entities.map((e) => e.human_id))})`);
    return `[Data: ${refs.join("; ")}]`;
  };
  const subjects = recurring(reports);
  const [lead, ...others] = people;
  if (broad === "lead" && lead) {
    // Said as what it is: the most mentioned (a teller who says "I" is seldom named, so may not be it).
    const rest = others.length > 0 ? `, then ${names(others)} ${cite(others)}` : "";
    return `The character the text names most is ${lead.name} ${cite([lead])}${rest}.${describe([lead], said)}`;
  }
  if (broad === "people" && people.length > 0)
    return `The main characters are ${names(people)} ${cite(people)}.${describe(people.slice(0, 3), said)}`;
  if (broad === "places" && places.length > 0)
    return `The main places are ${names(places.map(withArticle))} ${cite(places)}.`;
  const parts: string[] = [];
  if (people.length > 0) parts.push(`centres on ${names(people.slice(0, 4))}`);
  if (events.length > 0) parts.push(`around ${names(events)}`);
  if (places.length > 0) parts.push(`in ${names(places.map(withArticle))}`);
  const about =
    parts.length > 0
      ? `The material ${parts.join(", ")} ${cite([...people.slice(0, 4), ...events, ...places])}.`
      : "";
  const themes =
    subjects.length >= 3 ? ` Its recurring subjects are ${names(subjects.map((name) => ({ name })))}.` : "";
  return `${about}${themes}`.trim() || "The material's communities, most important first:";
}

/**
 * One sentence about each leading character, from its description, each sentence once: not one the
 * answer says already (`said`), nor one given for a character before (one sentence often names two).
 */
function describe(entities: EntityRow[], said: string[]): string {
  const used = [...said];
  const lines: string[] = [];
  for (const e of entities) {
    const sentence = sentencesAbout(e.description, e.name).find((s) => !used.some((u) => u.includes(s)));
    if (!sentence) continue;
    used.push(sentence);
    lines.push(`- ${e.name}: ${sentence} [Data: Entities (${e.human_id})]`);
  }
  return lines.length > 0 ? `\n\n${lines.join("\n")}` : "";
}

/** The report ids (of those in play) whose communities hold these entities. */
function reportsOf(entities: EntityRow[], reports: ReportRow[]): number[] {
  const byCommunity = new Map(reports.map((r) => [r.community_id, r.human_id]));
  const ids = new Set<number>();
  for (const e of entities)
    for (const c of JSON.parse(e.community_ids) as number[]) {
      const id = byCommunity.get(c);
      if (id !== undefined) ids.add(id);
    }
  return [...ids];
}

/** The words the reports list as recurring, by how many reports repeat them; no word of a name. */
export function recurring(reports: ReportRow[]): string[] {
  // A community's title is its leading names: "elizabeth" recurs because Elizabeth does.
  const named = new Set(reports.flatMap((r) => r.title.toLowerCase().match(/\p{L}+/gu) ?? []));
  const counts = new Map<string, number>();
  for (const r of reports) {
    const words = r.summary.match(/Recurring words: ([^.]*)\./)?.[1]?.split(", ") ?? [];
    for (const w of words) if (!named.has(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  // A subject of the whole is one that several communities repeat.
  return [...counts.entries()]
    .filter(([, n]) => n > 1)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([w]) => w);
}

/**
 * "the City", "the Cape": a place its description mostly writes after "the" (or a sentence's "The")
 * keeps it; "London", though "the London road" is there too, does not.
 */
function withArticle(e: EntityRow): { name: string } {
  // The name itself, not part of a longer one ("Cape" in "Cape Cod", "Bay" in "Massachusetts Bay").
  const name = `${escapeRegExp(e.name)}\\b(?!\\s+\\p{Lu})`;
  const all = e.description.match(new RegExp(`(?<!\\p{Lu}[\\p{L}'’]*\\s)\\b${name}`, "gu"))?.length ?? 0;
  const after = e.description.match(new RegExp(`\\b[Tt]he ${name}`, "gu"))?.length ?? 0;
  return after * 2 > all ? { name: `the ${e.name}` } : e;
}

function names(entities: { name: string }[]): string {
  const list = entities.map((e) => e.name);
  return list.length > 1 ? `${list.slice(0, -1).join(", ")} and ${list.at(-1)}` : (list[0] ?? "");
}
