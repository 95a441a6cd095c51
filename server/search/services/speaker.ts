/**
 * Questions that ask what someone thinks or feels ("What does Scrooge think of Christmas?", "How does
 * Elizabeth feel about Darcy?", "What is Victor's opinion of his creature?") are answered by what that
 * person says or thinks in the text ("'…every idiot who goes about with "Merry Christmas" on his lips
 * should be boiled with his own pudding,' said Scrooge"). Such a sentence seldom repeats "think", so
 * without this rule a sentence that only names the person beside the topic ("Once upon a time… old
 * Scrooge sat busy in his counting-house") ties with it.
 */
import { HONORIFICS, SPEECH_VERBS } from "../indexing/names.ts";
import type { Question } from "./question.ts";
import { stem } from "./terms.ts";

/**
 * For a question asking someone's opinion, a test of whether a sentence has that someone speak or think
 * ("said Scrooge", "Scrooge returned"; for "What does Darcy think of Elizabeth?" not "Elizabeth thought":
 * only the names the question writes before its opinion word); undefined for other questions.
 */
export function speakerTest(question: Question): ((text: string) => boolean) | undefined {
  if (!question.opinion?.length) return undefined;
  const names = new Set(question.opinion.map(stem));
  // "said Scrooge's nephew" is the nephew speaking, not Scrooge.
  const isName = (word: string | undefined) =>
    word !== undefined && !/['’]s$/i.test(word) && names.has(stem(word.toLowerCase()));
  return (text) => {
    const list = text.match(/[\p{L}’'-]+/gu) ?? [];
    for (const [i, word] of list.entries()) {
      if (!SPEECH_VERBS.has(word.toLowerCase())) continue;
      // "said Scrooge", "said Mr. Darcy", "said the Ghost"; "Scrooge said", "Darcy replied".
      let after = i + 1;
      while (after < list.length && /^(?:the|old|young)$/i.test(list[after] as string)) after++;
      if (HONORIFICS.has((list[after] ?? "").toLowerCase())) after++;
      if (isName(list[after]) || isName(list[i - 1])) return true;
    }
    return false;
  };
}
