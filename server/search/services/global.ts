/**
 * Global search: map over the community reports of one level (the partition at that level: its
 * communities plus the leaves of shallower levels), then reduce the scored points to an answer.
 *
 * With a model: reports shuffled (seeded) and packed into batches under the budget; each batch is asked
 * for JSON points scored 0–100; points above 0, best first, are packed for the reduce prompt whose answer
 * streams. Offline: global-offline.ts (extractive map and reduce). Nothing relevant gives GraphRAG's fixed
 * "unable to answer" message, never an invented answer.
 */
import { completeText, jsonIn, type ModelChoice } from "../model-calls.ts";
import type { SearchGraphStore } from "../stores/graph-store.ts";
import { estimateTokens } from "../text.ts";
import type { IndexRow, ReportRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer, streamModel } from "./answer.ts";
import { offlineGlobal } from "./global-offline.ts";
import type { SearchStores } from "./local-context.ts";
import { mapSystemPrompt, NO_DATA_ANSWER, reduceSystemPrompt } from "./prompts.ts";

export interface GlobalOptions {
  level?: number;
  /** Token budget of one map batch and of the reduce context. */
  maxTokens?: number;
  maxPoints?: number;
}

export interface Point {
  description: string;
  score: number;
  reports: number[];
}

export async function defaultLevel(
  graph: SearchGraphStore,
  index: IndexRow,
  requested?: number,
): Promise<number> {
  const max = await graph.maxLevel(index);
  return Math.max(0, Math.min(requested ?? 2, max));
}

export async function globalSearch(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  model?: ModelChoice,
  options: GlobalOptions = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const { graph } = stores;
  const level = await defaultLevel(graph, index, options.level);
  const maxTokens = options.maxTokens ?? 8000;
  if (!model) return offlineGlobal(stores, index, query, level, maxTokens, options.maxPoints ?? 8);
  const reports = shuffle(await graph.reportsInPartition(index, level), 86);
  const batches = pack(reports, maxTokens);
  const points: Point[] = [];
  const table = reports.map((r) => ({
    id: String(r.human_id),
    title: r.title,
    content: r.content,
    rank: r.rating,
    in_context: true,
  }));
  for (const batch of batches) {
    const context = `id|title|content\n${batch.map((r) => `${r.human_id}|${r.title}|${r.content}`).join("\n")}`;
    points.push(...parsePoints(await completeText(model, mapSystemPrompt(context), query, signal)));
  }
  const kept = points.filter((p) => p.score > 0).sort((a, b) => b.score - a.score);
  const data: ContextData = {
    reports: table,
    points: kept.map((p) => ({ description: p.description, score: p.score })),
  };
  if (kept.length === 0) return fixedAnswer(data, NO_DATA_ANSWER);
  const lines: string[] = [];
  let used = 0;
  for (const [i, p] of kept.entries()) {
    const line = `----Analyst ${i + 1}----\nImportance Score: ${p.score}\n${p.description}`;
    const cost = estimateTokens(line);
    if (used + cost > maxTokens) break;
    lines.push(line);
    used += cost;
  }
  const prompt = reduceSystemPrompt(lines.join("\n\n"));
  return { context_data: data, pieces: (s) => streamModel(model, prompt, query, s) };
}

/** Parses a map reply `{points: [{description, score}]}`; anything else yields no points. */
export function parsePoints(text: string): Point[] {
  const value = jsonIn(text) as { points?: unknown } | undefined;
  if (!value || !Array.isArray(value.points)) return [];
  const out: Point[] = [];
  for (const p of value.points as { description?: unknown; score?: unknown }[]) {
    const score = Number(p?.score);
    if (typeof p?.description !== "string" || !Number.isFinite(score)) continue;
    out.push({ description: p.description, score: Math.max(0, Math.min(100, score)), reports: [] });
  }
  return out;
}

function pack(reports: ReportRow[], budget: number): ReportRow[][] {
  const batches: ReportRow[][] = [];
  let current: ReportRow[] = [];
  let used = 0;
  for (const r of reports) {
    const cost = estimateTokens(`${r.human_id}|${r.title}|${r.content}`);
    if (current.length > 0 && used + cost > budget) {
      batches.push(current);
      current = [];
      used = 0;
    }
    current.push(r);
    used += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
