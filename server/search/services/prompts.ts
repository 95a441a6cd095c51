/**
 * Prompts of the query engines, written after GraphRAG's local, map, reduce and question prompts (in our
 * own words): answer from the data tables, cite them as [Data: <table> (ids)], and say so when the data
 * does not hold the answer.
 */

export const NO_DATA_ANSWER = "I am sorry but I am unable to answer this question given the provided data.";

const CITE = `Support each point with references to the data, written as [Data: <table> (<ids>)], for example
[Data: Entities (5, 7); Relationships (23); Sources (2, 7, 34, 46, 64, +more)]. List at most 5 ids in one reference and add "+more" when there are more. Do not include anything the data does not support.`;

export function localSystemPrompt(context: string, responseType = "multiple paragraphs"): string {
  return `You are a helpful assistant answering questions about the data in the tables below.

Answer the user's question in the form: ${responseType}. Summarise all the relevant information in the tables, and use general knowledge only to connect it. If the tables do not hold the answer, say that you do not know; do not make anything up.

${CITE}

Data tables:

${context}`;
}

export function mapSystemPrompt(context: string): string {
  return `You are a helpful assistant reading community reports of a knowledge graph.

List the key points in the reports below that help answer the user's question. Answer only with JSON:
{"points": [{"description": "the point, with its references [Data: Reports (ids)]", "score": an integer from 0 to 100 for how much the point helps answer the question}]}

If the reports do not help answer the question, answer {"points": [{"description": "${NO_DATA_ANSWER}", "score": 0}]}.
Cite reports as [Data: Reports (ids)], at most 5 ids per reference, "+more" for the rest. Use only the reports.

Reports:

${context}`;
}

export function reduceSystemPrompt(points: string, responseType = "multiple paragraphs"): string {
  return `You are a helpful assistant combining the reports of several analysts who each read part of a dataset.

The analysts' key points are below, most important first. Write one answer to the user's question in the form: ${responseType}. Remove what is not relevant, merge what overlaps, and keep each point's [Data: Reports (ids)] references (at most 5 ids per reference, "+more" for the rest). Do not add anything the points do not support. If they do not answer the question, say so.

Analysts' points:

${points}`;
}

export function questionsSystemPrompt(context: string, count: number): string {
  return `You are a helpful assistant suggesting follow-up questions about a dataset.

Given the user's question and the data tables below, write ${count} short questions a user could ask next, each answerable from the data and about its named entities. One question per line, each starting with "- ". Nothing else.

Data tables:

${context}`;
}
