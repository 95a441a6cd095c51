/**
 * Scoring one search answer against a question of the set, and adding scores up per mode and kind.
 *
 * - names the fact: the answer text (its [Data: …] references left out) holds one expected string as whole
 *   words; "in the opening": its first paragraph does (an answer that lists passages names more by luck);
 * - citation precision: of the rows the answer cites ([Data: Sources (3); Entities (5, 7, +more)] resolved
 *   against its context_data; an id that resolves to nothing counts as wrong), the share that hold the
 *   fact (an expected string or an evidence quote);
 * - refusal: the answer says it cannot answer (GraphRAG's fixed sentence anywhere, or a model's own words
 *   in its first sentence, unless that sentence is a quote from the book: "I don't know how many years");
 * - retrieval recall: some row given to the answerer (contextRows) holds the fact, so a miss can be told
 *   apart: a retrieval miss, or an answering miss.
 */
import { holdsNormalised, KINDS, type Kind, type Mode, normalise, type Question } from "./qa-set.ts";

export type Row = Record<string, string | number | boolean>;
export type ContextData = Record<string, Row[]>;

export interface Citation {
  table: string;
  id: string;
}

/** Every id an answer cites, as (table, id); "+more" is not an id. */
export function parseCitations(text: string): Citation[] {
  const out: Citation[] = [];
  for (const block of text.matchAll(/\[Data:([^\]]*)\]/g))
    for (const part of (block[1] ?? "").matchAll(/([A-Za-z ]+?)\s*\(([^)]*)\)/g)) {
      const table = (part[1] ?? "").trim().toLowerCase();
      for (const id of (part[2] ?? "").split(",").map((s) => s.trim()))
        if (id && id !== "+more") out.push({ table, id });
    }
  return out;
}

export function stripCitations(text: string): string {
  return text.replace(/\[Data:[^\]]*\]/g, " ");
}

/** GraphRAG's "unable to answer", and the ways models say the data does not hold an answer. */
const REFUSAL =
  /\b(unable to answer|cannot (be )?(answer|determined?|found|tell)|can't (answer|tell|determine)|(do|does|did) not (know|say|mention|state|specify|give|name|reveal|contain|include|provide)|(doesn't|don't|didn't) (know|say|mention|state|specify|give|name|reveal|contain|include|provide)|(is|are|was|were) not (mentioned|stated|specified|given|named|provided)|(isn't|aren't|wasn't|weren't) (mentioned|stated|specified|given|named|provided)|no (information|mention|record)\b)/i;

/** `book`: the book's normalised text, so a quoted sentence that happens to say "not known" is no refusal. */
export function isRefusal(text: string, book?: string): boolean {
  const plain = stripCitations(text);
  if (/unable to answer/i.test(plain)) return true;
  const first = plain.trim().match(/^[^\n]*?[.!?](?=\s|$)|^[^\n]*/)?.[0] ?? "";
  return REFUSAL.test(first) && !book?.includes(normalise(first).replace(/^["']+|["']+$/g, ""));
}

/** The answer's first paragraph: what a reader reads before deciding whether it answered. */
export function opening(text: string): string {
  const [first = ""] = stripCitations(text)
    .trim()
    .split(/\n\s*\n/);
  return first.trim();
}

/** The text of a context row: its string fields, the flags and numbers left out. */
export function rowText(row: Row): string {
  return Object.entries(row)
    .filter(([key, value]) => key !== "id" && typeof value === "string")
    .map(([, value]) => value)
    .join(" ");
}

/** Whether a text holds the question's fact: an expected string, or one of its evidence quotes. */
export function holdsFact(text: string, q: Question): boolean {
  const t = normalise(text);
  return q.expected.some((e) => holdsNormalised(t, e)) || q.evidence.some((e) => t.includes(normalise(e)));
}

/** The rows a citation names; a citation of a table or id the context does not have resolves to none. */
export function resolve(citation: Citation, context: ContextData): Row | undefined {
  return context[citation.table]?.find((row) => String(row.id) === citation.id);
}

/**
 * The rows given to the answerer. Local search: the rows that fit its token budget (`in_context`), which
 * are exactly its prompt's tables. Global search: every report in play, since the map step reads them all
 * (offline, `in_context` marks only the reports the answer cites).
 */
export function contextRows(context: ContextData, mode: Mode = "local"): Row[] {
  return Object.entries(context).flatMap(([table, rows]) =>
    mode === "global" && table === "reports" ? rows : rows.filter((row) => row.in_context !== false),
  );
}

export interface Outcome {
  id: string;
  kind: Kind;
  mode: Mode;
  answerable: boolean;
  named: boolean;
  /** Named in the first paragraph. */
  namedFirst: boolean;
  refused: boolean;
  /** Names the fact, but opens by saying the text does not say it (a near miss that was right). */
  hedged: boolean;
  /** Rows cited, and of those the ones that hold the fact (answerable questions only). */
  cited: number;
  citedHolding: number;
  /** The fact was in the context given to the answerer (answerable questions only). */
  recalled: boolean;
  ms: number;
  /** The answer's opening, for the per-question lines of the dev half. */
  opening: string;
}

/** `book`: the book's text, normalised (see isRefusal). */
export function scoreAnswer(
  q: Question,
  text: string,
  context: ContextData,
  options: { ms?: number; book?: string } = {},
): Outcome {
  const answerable = q.kind !== "unanswerable";
  const names = (t: string) => answerable && q.expected.some((e) => holdsNormalised(normalise(t), e));
  const named = names(stripCitations(text));
  const refusal = isRefusal(text, options.book);
  const rows = answerable ? parseCitations(text).map((c) => resolve(c, context)) : [];
  return {
    id: q.id,
    kind: q.kind,
    mode: q.mode,
    answerable,
    named,
    namedFirst: names(opening(text)),
    // An answer that names the fact while hedging ("the text does not say more, but…") answered.
    refused: refusal && !named,
    hedged: refusal && named,
    cited: rows.length,
    citedHolding: rows.filter((row) => row !== undefined && holdsFact(rowText(row), q)).length,
    recalled: answerable && contextRows(context, q.mode).some((row) => holdsFact(rowText(row), q)),
    ms: options.ms ?? 0,
    opening: text.replace(/\s+/g, " ").slice(0, 160),
  };
}

export interface Tally {
  answerable: number;
  named: number;
  namedFirst: number;
  unanswerable: number;
  correctRefusals: number;
  falseRefusals: number;
  hedged: number;
  cited: number;
  citedHolding: number;
  recalled: number;
}

export function tally(outcomes: Outcome[]): Tally {
  const answerable = outcomes.filter((o) => o.answerable);
  const unanswerable = outcomes.filter((o) => !o.answerable);
  return {
    answerable: answerable.length,
    named: answerable.filter((o) => o.named).length,
    namedFirst: answerable.filter((o) => o.namedFirst).length,
    unanswerable: unanswerable.length,
    correctRefusals: unanswerable.filter((o) => o.refused).length,
    falseRefusals: answerable.filter((o) => o.refused).length,
    hedged: answerable.filter((o) => o.hedged).length,
    cited: answerable.reduce((sum, o) => sum + o.cited, 0),
    citedHolding: answerable.reduce((sum, o) => sum + o.citedHolding, 0),
    recalled: answerable.filter((o) => o.recalled).length,
  };
}

/** The groups a report breaks figures into: all, each mode, each kind. */
export function groups(outcomes: Outcome[]): [string, Outcome[]][] {
  return [
    ["all", outcomes],
    ["local", outcomes.filter((o) => o.mode === "local")],
    ["global", outcomes.filter((o) => o.mode === "global")],
    ...KINDS.map((k): [string, Outcome[]] => [k, outcomes.filter((o) => o.kind === k)]),
  ];
}

const pct = (x: number, n: number) => (n === 0 ? "-" : `${Math.round((100 * x) / n)}%`);
const frac = (x: number, n: number) => (n === 0 ? "-" : `${x}/${n} ${pct(x, n)}`);

/** A Markdown table: per group (all, each mode, each kind), one line per system, the systems side by side. */
export function formatTable(systems: { name: string; outcomes: Outcome[] }[]): string {
  const lines = [
    "| group | answerer | names the fact | in the opening | citation precision | correct refusals | false refusals | hedged | retrieval recall |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  const grouped = systems.map((s) => ({ name: s.name, groups: new Map(groups(s.outcomes)) }));
  for (const [group] of groups(systems[0]?.outcomes ?? []))
    for (const system of grouped) {
      const t = tally(system.groups.get(group) ?? []);
      const cells = [
        group,
        system.name,
        frac(t.named, t.answerable),
        frac(t.namedFirst, t.answerable),
        t.cited === 0 ? "-" : `${pct(t.citedHolding, t.cited)} of ${t.cited}`,
        frac(t.correctRefusals, t.unanswerable),
        frac(t.falseRefusals, t.answerable),
        frac(t.hedged, t.answerable),
        frac(t.recalled, t.answerable),
      ];
      lines.push(`| ${cells.join(" | ")} |`);
    }
  return lines.join("\n");
}
