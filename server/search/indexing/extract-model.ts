/**
 * Model-driven extraction in GraphRAG's record format: the model lists entities and relationships as
 * tuples separated by `<|>`, records by `##`, and ends with `<|COMPLETE|>`. Gleaning asks again a bounded
 * number of times whether anything was missed, and keeps asking only while the model answers "Y".
 * The prompt is ours, written after GraphRAG's method.
 */
import type { Context } from "@mariozechner/pi-ai";
import { replyFailed, replyText } from "../../models/reply.ts";
import { type ModelChoice, ModelFailedError, userMessage } from "../model-calls.ts";
import { escapeRegExp } from "../text.ts";
import { ENTITY_TYPES, type Extraction } from "../types.ts";

export const TUPLE = "<|>";
export const RECORD = "##";
export const COMPLETE = "<|COMPLETE|>";

export function extractionPrompt(text: string, types: string[] = ENTITY_TYPES): string {
  return `You build a knowledge graph from text.

Task: find every entity of these types: ${types.join(", ")}; then every pair of those entities that are clearly related.

For each entity write one record:
("entity"${TUPLE}NAME IN CAPITALS${TUPLE}TYPE${TUPLE}what the text says about the entity and what it does)
For each related pair write one record:
("relationship"${TUPLE}SOURCE NAME${TUPLE}TARGET NAME${TUPLE}why they are related, from the text${TUPLE}strength from 1 to 10)

Separate records with ${RECORD}. Use only facts in the text. When you have listed everything, write ${COMPLETE}.

Example:
("entity"${TUPLE}ADA LOVELACE${TUPLE}person${TUPLE}Ada Lovelace wrote the first published program)${RECORD}
("entity"${TUPLE}LONDON${TUPLE}geo${TUPLE}the city where Ada Lovelace lived)${RECORD}
("relationship"${TUPLE}ADA LOVELACE${TUPLE}LONDON${TUPLE}Ada Lovelace lived and worked in London${TUPLE}6)
${COMPLETE}

Text:
${text}

Records:`;
}

export const GLEAN_PROMPT = `Many entities and relationships were missed in the last answer. Add them below in the same format, only the new ones.`;
export const CONTINUE_PROMPT = `Were any entities or relationships still missed? Answer only Y or N.`;

/** Parses the record format; malformed records are skipped, never fatal. */
export function parseRecords(output: string): Extraction {
  const result: Extraction = { entities: [], relationships: [] };
  const body = output.split(COMPLETE)[0] ?? "";
  for (const raw of body.split(new RegExp(`${escapeRegExp(RECORD)}|\\n`))) {
    const record = raw.trim().match(/\((.*)\)/s)?.[1];
    if (!record) continue;
    const fields = record.split(TUPLE).map((f) =>
      f
        .trim()
        .replace(/^["']|["']$/g, "")
        .trim(),
    );
    const kind = fields[0]?.toLowerCase();
    if (kind === "entity" && fields.length >= 4 && fields[1]) {
      result.entities.push({
        name: clean(fields[1]),
        type: (fields[2] ?? "").toLowerCase(),
        description: fields.slice(3).join(" ").trim(),
      });
    } else if (kind === "relationship" && fields.length >= 4 && fields[1] && fields[2]) {
      const strength = Number(fields[4]);
      result.relationships.push({
        source: clean(fields[1]),
        target: clean(fields[2]),
        description: fields[3] ?? "",
        weight: Number.isFinite(strength) && strength > 0 ? strength : 1,
      });
    }
  }
  return result;
}

function clean(name: string): string {
  return name.replace(/\s+/g, " ").trim().toUpperCase();
}

export interface ModelExtractorOptions extends ModelChoice {
  /** Extra rounds asking for missed records (GraphRAG's default is 1). */
  maxGleanings?: number;
  signal?: AbortSignal;
}

/** Extracts one unit with the model, gleaning at most `maxGleanings` extra rounds. */
export async function extractWithModel(text: string, options: ModelExtractorOptions): Promise<Extraction> {
  const { models, model, maxGleanings = 1, signal } = options;
  const context: Context = { messages: [userMessage(extractionPrompt(text))] };
  const ask = async () => {
    const reply = await models.complete(model, context, { signal });
    if (replyFailed(reply))
      throw new ModelFailedError(`extraction model failed: ${reply.errorMessage ?? reply.stopReason}`);
    context.messages.push(reply);
    return replyText(reply);
  };
  const outputs = [await ask()];
  for (let round = 0; round < maxGleanings; round++) {
    context.messages.push(userMessage(GLEAN_PROMPT));
    outputs.push(await ask());
    if (round === maxGleanings - 1) break;
    context.messages.push(userMessage(CONTINUE_PROMPT));
    if (!(await ask()).trim().toUpperCase().startsWith("Y")) break;
  }
  const merged: Extraction = { entities: [], relationships: [] };
  for (const output of outputs) {
    const parsed = parseRecords(output);
    merged.entities.push(...parsed.entities);
    merged.relationships.push(...parsed.relationships);
  }
  return merged;
}
