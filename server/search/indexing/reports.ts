/**
 * Community reports in GraphRAG's shape `{title, summary, rating, rating_explanation, findings}`.
 * With a model: the community's entities and relationships go to the model as tables and it answers that
 * JSON (a reply that does not parse falls back to the extractive report, with a warning). Offline: an
 * extractive report built from the community's most connected entities, its heaviest relationships and
 * the sentences that describe them.
 */
import { replyFailed, replyText } from "../../models/reply.ts";
import { jsonIn, type ModelChoice, userMessage } from "../model-calls.ts";
import { firstSentence, sentenceAbout } from "../text.ts";
import type { Finding, Report } from "../types.ts";

export interface ReportEntity {
  human_id: number;
  name: string;
  type: string;
  description: string;
  degree: number;
}

export interface ReportRelationship {
  human_id: number;
  source: string;
  target: string;
  description: string;
  weight: number;
}

export interface ReportInput {
  entities: ReportEntity[];
  relationships: ReportRelationship[];
}

const MAX_FINDINGS = 8;

export function offlineReport({ entities, relationships }: ReportInput): Report {
  const people = [...entities].sort((a, b) => b.degree - a.degree || a.name.localeCompare(b.name));
  const heavy = [...relationships].sort((a, b) => b.weight - a.weight || a.human_id - b.human_id);
  const names = people.slice(0, 3).map((e) => e.name);
  const title =
    names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : (names[0] ?? "Community");
  const lead = people[0];
  const words = recurringWords(
    [...entities.map((e) => e.description), ...relationships.map((r) => r.description)],
    entities.map((e) => e.name),
  );
  const summary =
    `This community has ${entities.length} entities and ${relationships.length} relationships. ` +
    (lead
      ? `${lead.name} (${lead.type}) is the most connected: ${sentenceAbout(lead.description, lead.name)}`
      : "") +
    (words.length > 0 ? ` Recurring words: ${words.join(", ")}.` : "");
  const findings: Finding[] = heavy.slice(0, MAX_FINDINGS).map((r) => ({
    summary: `${r.source} and ${r.target}`,
    explanation: `${firstSentence(r.description)} [Data: Relationships (${r.human_id})]`,
  }));
  if (findings.length < MAX_FINDINGS) {
    for (const e of people.slice(0, MAX_FINDINGS - findings.length)) {
      findings.push({
        summary: e.name,
        explanation: `${sentenceAbout(e.description, e.name)} [Data: Entities (${e.human_id})]`,
      });
    }
  }
  const totalWeight = relationships.reduce((sum, r) => sum + r.weight, 0);
  const rating = Math.min(10, Math.round(Math.log2(1 + totalWeight) * 10) / 10);
  return {
    title,
    summary,
    rating,
    rating_explanation: `Rated by how much the text ties these entities together (total relationship weight ${totalWeight}).`,
    findings,
  };
}

/** Words of ordinary prose that say nothing about a subject. */
const PLAIN_WORDS = new Set(
  `about above after again against also although always among another anything around away back because
   been before behind being below between both came come comes could did does doing done down during each
   either else even ever every first from gave give given goes going gone good great had has have having
   here herself himself however into itself just know knew last least less like little long look looked
   made make many might more most much must myself never next nothing now once only other others ought our
   ours over own quite rather said same says seemed shall should since some something still such take
   than that their theirs them themselves then there these they thing things think this those though
   through thus till together too took toward towards under until upon very want was were what whatever
   when where whether which while whom whose why will with within without would yet you your yours
   yourself again upon cried replied returned asked answered back away sir yes well even dear along
   across part name named call called appeared found felt heard held kept left seen stood told turned went
   became began brought tried whole half side almost enough perhaps already indeed certainly another
   shall mean meant means often soon sometimes seem seems began every`.split(/\s+/),
);

/** The content words a community's text repeats most: what its part of the material is about. */
export function recurringWords(texts: string[], names: string[], limit = 6): string[] {
  const named = new Set(names.flatMap((n) => n.toLowerCase().match(/[a-z]+/g) ?? []));
  const counts = new Map<string, number>();
  for (const text of texts)
    for (const word of new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? [])) {
      if (PLAIN_WORDS.has(word) || named.has(word) || word.endsWith("ly")) continue;
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  return [...counts.entries()]
    .filter(([, n]) => n > 1)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([w]) => w);
}

/** The report as text: what FTS indexes and what a context table shows as `content`. */
export function reportContent(report: Report): string {
  const findings = report.findings.map((f) => `## ${f.summary}\n\n${f.explanation}`).join("\n\n");
  return `# ${report.title}\n\n${report.summary}\n\n${findings}`;
}

export function reportPrompt({ entities, relationships }: ReportInput): string {
  const entityRows = entities
    .map((e) => `${e.human_id},${csv(e.name)},${csv(e.type)},${csv(e.description)}`)
    .join("\n");
  const relationshipRows = relationships
    .map((r) => `${r.human_id},${csv(r.source)},${csv(r.target)},${csv(r.description)},${r.weight}`)
    .join("\n");
  return `You write a report about one community of a knowledge graph: a group of entities and how they relate.

Answer only with JSON of this shape:
{"title": "a short specific name for the community naming its key entities",
 "summary": "an executive summary of its structure and what matters in it",
 "rating": a number from 0 to 10 for how important the community is,
 "rating_explanation": "one sentence explaining the rating",
 "findings": [{"summary": "a one-line insight", "explanation": "a paragraph grounded in the data, citing it as [Data: Entities (ids); Relationships (ids)]"}]}

Give 5 to 10 findings. Use only the data below. Cite at most 5 ids per reference and add "+more" when there are more.

Entities
id,entity,type,description
${entityRows}

Relationships
id,source,target,description,weight
${relationshipRows}

JSON:`;
}

/** Parses a model's report; undefined when it is not the report shape. */
export function parseReport(text: string): Report | undefined {
  const r = jsonIn(text) as Partial<Report> | undefined;
  if (typeof r?.title !== "string" || typeof r.summary !== "string" || !Array.isArray(r.findings))
    return undefined;
  const findings = r.findings
    .filter((f): f is Finding => typeof f?.summary === "string" && typeof f?.explanation === "string")
    .map((f) => ({ summary: f.summary, explanation: f.explanation }));
  const rating = Number(r.rating);
  return {
    title: r.title,
    summary: r.summary,
    rating: Number.isFinite(rating) ? Math.max(0, Math.min(10, rating)) : 0,
    rating_explanation: typeof r.rating_explanation === "string" ? r.rating_explanation : "",
    findings,
  };
}

export async function modelReport(
  input: ReportInput,
  { models, model }: ModelChoice,
  signal?: AbortSignal,
): Promise<Report | undefined> {
  const reply = await models.complete(model, { messages: [userMessage(reportPrompt(input))] }, { signal });
  if (replyFailed(reply)) return undefined;
  return parseReport(replyText(reply));
}

function csv(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""').replace(/\n/g, " ")}"` : text;
}
