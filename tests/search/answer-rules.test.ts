/**
 * Rules of the offline answerer added for issue 31's answer aims, each on a small text written for the
 * test: a sentence that states the asked relation ("Agnes, the wife of Captain Harlow") answers "whom did
 * Harlow marry" over one where the names only meet; "by the end of the story" reads the last pages that
 * name the question's subject, not a licence printed after the story; "how does the author describe X"
 * is answered by the sentence saying what X is, though it never uses the question's word; a page that
 * says the question's own phrase ("make the golem") joins the pool though each of its words is common;
 * "who is X?" is answered by what the text says X is ("Mr. Pell, a miller of Fenwick"), about X and not
 * about a namesake ("Mrs. Pell"), and "how is X related to Y?" by what X is to Y ("Nell, the niece of
 * old Pell"); a title the question writes ("Mr. Harlow") is no name to match on; a signature or a heading
 * ("Alphonse Bartholomew Pell.") opens no answer; "what does X think of Y" is answered by what X says of
 * it; a name sharing a word with the question's ("Nell Pell", "Pell Lodge") still answers; "how many
 * lamps" counts "nine brass lamps"; a name the question writes matches a name, not a common word ("the
 * park"); "what is the river to the author?" is answered by what the text says the river is; a broad
 * answer says "in the City" where the text does; "'What did you sell?' asked Nell." is a question still;
 * "What is Pell's niece's name?" wants a person and "Nell, Pell's niece" states it; a list of characters
 * ('Tim Pell ("Little Tim"), a miller's boy') says who Little Tim is; an age answers "how old is X" only
 * when said of X; "what is X's estate worth" asks a sum; "how does the story end?" is answered by its last
 * sentences; "who wrote this book?" by the front matter's credit; "tell me about X" is "who is X?"; "list
 * the characters" and "give me a summary" are broad questions; "who is the narrator?" is the one addressed
 * by name whom the first-person narration never names.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recurringWords } from "../../server/search/indexing/reports.ts";
import { recurring } from "../../server/search/services/global-offline.ts";
import { subjectOf } from "../../server/search/services/subject.ts";
import type { EntityRow, ReportRow } from "../../server/search/types.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

type Row = Record<string, string | number | boolean>;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const ask = async (name: string, text: string, query: string, mode: "local" | "global" = "local") => {
  const documents = [{ name: `${name}.txt`, text }];
  expect((await t.request("/search/index", postJson({ name, documents }))).status).toBe(200);
  const { status, body } = await t.json<{ response: string; context_data: Record<string, Row[]> }>(
    `/search/${mode}`,
    postJson({ index: name, query }),
  );
  expect(status).toBe(200);
  return { response: body.response, opening: body.response.split("\n\n")[0] as string };
};

/** `count` sentences, the nth made by `line(n)`, as one text. */
const lines = (count: number, line: (n: number) => string) =>
  Array.from({ length: count }, (_, i) => line(i + 1)).join(" ");

/** A licence printed after a downloaded book: long, and sharing no word with the stories asked about. */
const LICENCE = lines(
  120,
  (n) =>
    `Section ${n}. This electronic work is distributed free of charge under the terms of the licence; you may copy it, give it away or reuse it under those terms.`,
);

describe("the offline answerer's rules", () => {
  test("the sentence stating the asked relation answers, not one where the names only meet", async () => {
    const text = [
      "Captain Harlow came home from the sea in the spring of that year.",
      '"You must make Rose marry Captain Harlow," said her aunt to the vicar, "or he will sail again."',
      '"Not I," said Rose, and laughed at them both.',
      "The village talked of nothing else for a month.",
      "Agnes, the wife of Captain Harlow, kept the inn at Fenwick for forty years.",
      '"Welcome home," said Agnes to the sailors.',
    ].join(" ");
    const { opening } = await ask("relation", text, "Whom did Captain Harlow marry?");
    expect(opening).toContain("Agnes, the wife of Captain Harlow");
  });

  test("by the end of the story: the last pages naming the subject, not a licence after them", async () => {
    const chapter = (n: number) =>
      lines(
        40,
        (day) =>
          `In the ${n}th winter, day ${day}, the miller Pell counted his sacks by the fire, and the valley went hungry.`,
      );
    const story = `Pell said that he had never changed and never would. ${chapter(1)}\n\n${chapter(2)}\n\n${chapter(3)}\n\nAt the last Pell opened his granary to the whole valley, and he was the kindest man in it until he died.`;
    const { response } = await ask(
      "ending",
      `${story}\n\n${LICENCE}`,
      "How has Pell changed by the end of the story?",
    );
    expect(response).toContain("opened his granary to the whole valley");
  });

  test("by the end of a story told in the first person: its last page, which never names the teller", async () => {
    const chapter = (n: number) =>
      lines(
        40,
        (day) =>
          `“Row harder, Jim,” said the captain on the ${n}th morning, day ${day}, and I rowed the boat along the reef.`,
      );
    // The last pages: the teller at home, in the first person, never named.
    const home = lines(
      60,
      (day) =>
        `Years later, on day ${day} of the winter, I kept the inn with my mother and spoke of the voyage to no one.`,
    );
    const story = `${chapter(1)}\n\n${chapter(2)}\n\n${chapter(3)}\n\n${home} Nothing would bring me back to that cursed island; the worst dreams I have are of its surf.`;
    const { response } = await ask(
      "ending-told",
      `${story}\n\n${LICENCE}`,
      "How does Jim feel about the island at the end of the story?",
    );
    expect(response).toContain("Nothing would bring me back to that cursed island");
  });

  test("a question asking how something is described is answered by the sentence saying what it is", async () => {
    const shapes = Array.from(
      { length: 8 },
      (_, i) =>
        `On the ${i + 1}th day we saw boats of every shape and form drawn up on the beach of Marrow Island.`,
    ).join(" ");
    const text = `${shapes} Marrow Island is a long hook of sand curled about a quiet lagoon, three miles from end to end. The ferry to Marrow Island left at noon.`;
    const { opening } = await ask(
      "describe",
      text,
      "How does the author describe the shape of Marrow Island?",
    );
    expect(opening).toContain("a long hook of sand");
  });

  test("a page saying the question's own phrase is read, though every word of it is common", async () => {
    // 30 documents named `<name>-<i>.txt`, each the sentence six times.
    const many = (name: string, sentence: string) =>
      Array.from({ length: 30 }, (_, i) => ({
        name: `${name}-${i}.txt`,
        text: Array.from({ length: 6 }, () => sentence).join(" "),
      }));
    const documents = [
      ...many("cellar", "Rupert feared the heavy thing he had created in the cellar."),
      ...many("bakery", "The golem slept by the oven while the bakers make bread."),
      {
        name: "workshop.txt",
        text: `The workshop was cold that spring and the river ran high past its door. ${"The apprentices swept the floor and sang. ".repeat(8)}He resolved to make the golem of river stone, weighing about nine tons. ${"The apprentices swept the floor and sang. ".repeat(8)}`,
      },
    ];
    expect((await t.request("/search/index", postJson({ name: "phrases", documents }))).status).toBe(200);
    const { body } = await t.json<{ context_data: Record<string, Row[]> }>(
      "/search/local",
      postJson({ index: "phrases", query: "How heavy did Rupert make the golem he created?" }),
    );
    const given = (body.context_data.sources ?? []).filter((r) => r.in_context).map((r) => String(r.text));
    expect(given.some((text) => text.includes("nine tons"))).toBe(true);
  });

  test("who is X: the sentence saying what X is, about X and not a namesake", async () => {
    const text = [
      "Mrs. Pell kept the mill house at Fenwick and baked for the valley.",
      "Old Pell stood at the door of the mill and shouted at Harrow the carter.",
      "Harrow laughed at Pell and drove away towards Ludlow.",
      "Mr. Pell, a miller of Fenwick grown rich on the valley's hunger, counted his sacks by the fire.",
      "Mrs. Pell called Pell in to supper, and Pell came.",
      "Harrow told the whole valley that Pell had shouted at him.",
    ].join(" ");
    const { response, opening } = await ask("identity", text, "Who is Pell?");
    // What the text says Pell is, plainly, not hedged and not another person named first.
    expect(opening).toStartWith("Mr. Pell, a miller of Fenwick");
    // What Pell does is asked the same way, and so is a request to describe him.
    for (const query of [
      "What was Pell's trade?",
      "What did Pell do for a living?",
      "Tell me about Pell.",
      "Describe Pell",
      "What do we know about Pell?",
      // As the suggested follow-ups ask it (questions.ts).
      "What role does Pell play?",
    ]) {
      const { body } = await t.json<{ response: string }>(
        "/search/local",
        postJson({ index: "identity", query }),
      );
      expect(body.response).toStartWith("Mr. Pell, a miller of Fenwick");
    }
    // One who says who he is answers too: "'I'm poor Harrow, I am,' said the carter, …"
    const carter = await ask(
      "identity-self",
      [
        "Harrow drove his cart along the valley road past the mill every morning.",
        "Harrow stopped at the mill, and Harrow shouted for Pell.",
        '"I\'m poor Harrow, I am," said the carter, who had carried salt over the hills for forty years.',
        "Harrow drove on to Ludlow and Harrow sold his salt.",
      ].join(" "),
      "Who is Harrow?",
    );
    expect(carter.opening).toStartWith('"I\'m poor Harrow, I am," said the carter');
    // The subject is Pell, not the entity that only contains the name.
    expect(response).toMatch(/^Pell \(person\) \[Data: Entities \(\d+\)\]/m);
    expect(response).not.toMatch(/^Mrs\. Pell \(person\)/m);
    // The title decides between namesakes whichever the search ranked first.
    const entity = (id: number, name: string): EntityRow => ({
      ...{ id, human_id: id, name, type: "person", description: "", degree: 1, mentions: 1 },
      ...{ unit_ids: "[]", community_ids: "[]" },
    });
    const [pell, mrs] = [entity(1, "Pell"), entity(2, "Mrs. Pell")];
    for (const ranked of [
      [pell, mrs],
      [mrs, pell],
    ]) {
      expect(subjectOf(ranked, "Who is Pell?")?.name).toBe("Pell");
      expect(subjectOf(ranked, "Who is Mrs. Pell?")?.name).toBe("Mrs. Pell");
    }
  });

  test("a title in the question is no name: 'the wife of Mr. Dale' does not answer for Mr. Harlow", async () => {
    const text = [
      "Mr. Harlow came home from the sea in the spring of that year, and Mr. Dale with him.",
      "Agnes, the wife of Mr. Dale, kept the inn at Fenwick for forty years.",
      "Rose Finch had married Harlow at Fenwick church, and the sailors cheered.",
      "The village talked of nothing else for a month.",
    ].join(" ");
    const { opening } = await ask("titles", text, "Who is Mr. Harlow's wife?");
    expect(opening).toContain("Rose Finch");
    expect(opening).not.toContain("Agnes");
  });

  test("how is X related to Y: the sentence saying what one is to the other", async () => {
    const text = [
      "Nell sat with Pell by the fire of the mill house, and Pell related the news of the valley to Nell.",
      "Pell and Nell walked to Fenwick market, where Nell sold the eggs and Pell bought a sack of salt.",
      "Nell, the niece of old Pell, kept the accounts of the mill.",
      "Harrow the carter said that Pell and Nell were the two hardest bargainers in the valley.",
    ].join(" ");
    for (const query of ["How is Nell related to Pell?", "What is the relationship between Nell and Pell?"]) {
      const { opening } = await ask(`kin-${query.length}`, text, query);
      expect(opening).toStartWith("Nell, the niece of old Pell");
    }
  });

  test("a signature or a heading, every word capitalised, does not open an answer", async () => {
    const text = [
      "The Mill at Fenwick.",
      "“Come home before the frost, dear Nell, for the mill is cold without you.",
      "“Alphonse Bartholomew Pell.",
      "Harrow met old Pell at the market in Fenwick and sold him two sacks of salt for the winter.",
      "Pell paid him in silver, and Harrow drove home singing.",
    ].join("\n\n");
    const { opening } = await ask("signature", text, "Who is Alphonse Pell?");
    expect(opening).not.toContain("Alphonse Bartholomew Pell.");
    expect(opening).toContain("Pell");
  });

  test("what X thinks of Y: what X says of it, not a sentence that only names both", async () => {
    const text = [
      "Old Pell kept the mill at Fenwick, and every autumn the harvest fair came to the green below it.",
      "'The harvest fair is the best week of the year!' said Pell's niece, and ran down to the fair.",
      "'I am going to bed,' said Pell, who felt the cold in his bones that autumn.",
      "Pell sat at his window above the harvest fair and counted the sacks going by.",
      '"A fair is a week of idle hands and broken fences," said Pell, "and the harvest would be the better without it."',
      "Nell loved the fair, and danced at it every year until the fiddlers went home.",
    ].join(" ");
    for (const query of ["What does Pell think of the harvest fair?", "How does Pell feel about the fair?"]) {
      const { opening } = await ask(`opinion-${query.length}`, text, query);
      expect(opening).toContain("a week of idle hands");
    }
  });

  test("a name sharing a word with the question's is still an answer: Nell Pell is Sir Harry Pell's daughter", async () => {
    const text = [
      "The daughter of Sir Harry Pell was the talk of Fenwick market every Saturday.",
      "Sir Harry Pell had one child, a daughter, Nell Pell, who kept his house and his accounts.",
      '"Come in out of the rain," said Nell Pell to the carter.',
    ].join(" ");
    const { opening } = await ask("kin-name", text, "Who is Sir Harry Pell's daughter?");
    expect(opening).toContain("Nell Pell");
  });

  test("a place question: a named house answers though its name reads as an institution (Pell Lodge)", async () => {
    const text = [
      "Sir Harry Pell lived near Fenwick, and his house near Fenwick was the largest in the valley.",
      "On leaving trade he had moved to a house a mile from Fenwick, called from that day Pell Lodge, where he dined every week with the vicar.",
      "Fenwick had a market, a mill and a church.",
    ].join(" ");
    const { opening } = await ask("called", text, "What did Sir Harry Pell call his house near Fenwick?");
    expect(opening).toContain("Pell Lodge");
  });

  test("how many: the number counting the asked thing though a word comes between (nine brass lamps)", async () => {
    const text = [
      "When the light of the tower was made new, Pell trimmed the lamps of the tower for twenty nights.",
      "The light consisted of nine brass lamps set in a ring.",
      "Ships saw the tower from the sea.",
    ].join(" ");
    const { opening } = await ask("counted", text, "How many lamps made up the light of the tower?");
    expect(opening).toContain("nine brass lamps");
  });

  test("a name the question writes is matched as a name: 'Fenwick Park' is not any park", async () => {
    const text = [
      '"Come along," said Nell, and took Harrow for a walk in the park.',
      "Mr. Dale has taken Fenwick at last, and comes down from the north with his sisters.",
      "Fenwick is the largest house in the county.",
    ].join(" ");
    const { opening } = await ask("name-case", text, "Who takes Fenwick Park?");
    expect(opening).toContain("Mr. Dale");
    // A question in Title Case writes its verb as a name: met in lower case, it still counts.
    const titled = [
      '"Fenwick is the finest house in the county," said Harrow to the carter.',
      "Mr. Dale rents Fenwick from the bishop, and pays at Michaelmas.",
    ].join(" ");
    const rents = await ask("title-case", titled, "Who Rents Fenwick?");
    expect(rents.opening).toContain("Mr. Dale rents Fenwick");
  });

  test("what a thing named by a common noun is to the author: the sentence saying what it is", async () => {
    const text = [
      "We walked beside the river for three days, and the river ran brown and fast beside the road.",
      "At Fenwick the river turned a mill, and we crossed the river there by the old bridge.",
      "The river is a road that never ends, and a friend to every traveller who will follow it.",
      "We slept at the inn.",
    ].join(" ");
    for (const query of ["What is the river to the author?", "What is the river like?"]) {
      const { opening } = await ask(`thing-${query.length}`, text, query);
      expect(opening).toContain("a road that never ends");
    }
  });

  test("a broad answer names a place as the text does ('in the City', not 'in City') and says it once", async () => {
    const text = [
      "Old Pell kept a counting-house in the City, and Nell Pell kept his books.",
      '"The City is cold tonight," said Nell Pell to Harrow.',
      "Harrow drove the cart from the City to Fenwick every morning, and Pell paid him on Saturdays.",
      "Pell and Harrow quarrelled in the City over the price of salt, and Nell made the peace.",
    ].join(" ");
    const { opening } = await ask("article", text, "What is this story about?", "global");
    expect(opening).toContain("in the City");
    expect(opening).not.toMatch(/\bin City\b/);
    // A place the text mostly writes bare keeps no article for one "the London road".
    const london = await ask(
      "article-london",
      [
        "Old Pell kept a counting-house in London, and Nell Pell kept his books in London.",
        "Harrow drove the cart along the London road to Fenwick every morning, and Pell paid him.",
        "Pell and Harrow quarrelled in London over the price of salt, and Nell made the peace in London.",
      ].join(" "),
      "What is this story about?",
      "global",
    );
    expect(london.opening).toMatch(/\bin London\b/);
    expect(london.opening).not.toContain("the London");
    // Where the story takes place (or is set) is asked of the whole: its main places, as the text writes them.
    for (const query of ["Where does the story take place?", "Where is the novel set?"]) {
      const places = await ask("article", text, query, "global");
      expect({ query, opening: places.opening }).toEqual({
        query,
        opening: expect.stringMatching(/^The main places are the City\b/),
      });
    }

    // The place's description is the sentence that first names it, here opening with "The City".
    const opening2 = await ask(
      "article-opening",
      [
        "The City clocks had gone three when Pell shut the counting-house, and Nell Pell kept his books.",
        "The City was cold that night, and Harrow drove the cart to Fenwick, and Pell paid him.",
        "Pell and Harrow quarrelled at Fenwick over the price of salt, and Nell made the peace.",
      ].join(" "),
      "What is this story about?",
      "global",
    );
    expect(opening2.opening).toContain("in the City");
    expect(opening2.opening).not.toMatch(/\bin City\b/);
    // Its community's point is the place's description and its first finding: one sentence, said once.
    expect(opening2.response.split("The City clocks had gone three").length - 1).toBe(1);
  });

  test("a broad answer says what the story is around, not a day or a month; a character's line says more than the name", async () => {
    const text = [
      "On Saturday Old Pell drove to the Harvest Fair at Fenwick with Nell Pell, as he did every Saturday in October.",
      '"Dermot Harrow." That was all the stranger said at the Harvest Fair on Saturday.',
      "Dermot Harrow, a drover from the hills, bought Pell's grey mare at the Harvest Fair in October.",
      "Every Saturday in October, Nell Pell sold eggs at Fenwick, and on Saturday Harrow came back.",
      "On Saturday Pell and Harrow quarrelled over the mare, and Nell Pell made the peace on Monday.",
    ].join(" ");
    const { opening, response } = await ask("dates", text, "What is this story about?", "global");
    expect(opening).toContain("Harvest Fair");
    expect(opening).not.toMatch(/around[^.[]*\b(Saturday|Monday|October)\b/);
    const { response: people } = await ask("dates", text, "Who are the main characters?", "global");
    expect(people).toMatch(/- Dermot Harrow: [^\n]*\w+ \w+ \w+/);
    // Each sentence once: one that names two characters, or that a community line quotes, is not said again.
    for (const sentence of people
      .split("\n")
      .flatMap((l) => l.match(/^- [^:]+: (.*) \[Data: Entities/)?.[1] ?? []))
      expect({ sentence, times: people.split(sentence).length - 1 }).toEqual({ sentence, times: 1 });
    expect(`${response}\n${people}`).not.toContain(': "Dermot Harrow." [Data');
    // Asked as requests, the same broad questions.
    expect((await ask("dates", text, "List the characters.", "global")).opening).toStartWith(
      "The main characters are",
    );
    const summary = await ask("dates", text, "Give me a summary of the story", "global");
    expect(summary.opening).toStartWith("The material centres on");
    // Asked of local search (the view's default), a question about the whole gets the same answer.
    for (const [query, start] of [
      ["What is this story about?", "The material centres on"],
      ["Who are the main characters?", "The main characters are"],
      ["Who is the main character?", "The character the text names most is Dermot Harrow"],
    ] as const)
      expect((await ask("dates", text, query, "local")).opening).toStartWith(start);
  });

  test("'How does the story end?' is answered by its last sentences, not by a licence, a closing line or a note", async () => {
    const chapter = (n: number) =>
      lines(
        30,
        (day) =>
          `On day ${day} of the ${n}th winter the miller Pell counted his sacks, and the valley went hungry.`,
      );
    const story = [
      "The Project Gutenberg EBook of The Miller, by A. Writer",
      "Title: The Miller",
      "*** START OF THIS PROJECT GUTENBERG EBOOK THE MILLER ***",
      chapter(1),
      chapter(2),
      "At the last Pell opened his granary to the whole valley. Nell rang the bell, and the valley ate bread that night.",
      "THE END",
      "+--------------------------------------------------+\n|Transcriber's note: spelling has been kept as printed.|\n+--------------------------------------------------+",
      "End of the Project Gutenberg EBook of The Miller, by A. Writer",
      "*** END OF THIS PROJECT GUTENBERG EBOOK THE MILLER ***",
      LICENCE,
    ].join("\n\n");
    for (const [mode, query] of [
      ["local", "How does the story end?"],
      ["global", "What happens at the end?"],
      ["local", "How did it end?"],
      ["global", "What is the ending of the book?"],
    ] as const) {
      const { opening, response } = await ask(`ending-${query.length}`, story, query, mode);
      expect({ query, opening }).toEqual({
        query,
        opening: expect.stringContaining("the valley ate bread that night"),
      });
      for (const never of ["Project Gutenberg", "Transcriber", "Section", "day 1 of"])
        expect({ query, never, said: response.includes(never) }).toEqual({ query, never, said: false });
    }
  });

  test("'What happened in Fenwick?' is answered about Fenwick, not by a sentence that says 'happened'", async () => {
    const text = [
      "Harrow said that nothing ever happened on the valley road, and that nothing had happened there for years.",
      "In Fenwick the miller Pell opened his granary to the whole valley in the hungry winter.",
      "Harrow drove his cart to Ludlow every morning and sold his salt there.",
      "Nell Pell kept the mill's books by the fire and rang the bell at noon.",
    ].join(" ");
    for (const query of ["What happened in Fenwick?", "What happens in Fenwick?"]) {
      const { opening } = await ask(`happened-${query.length}`, text, query);
      expect({ query, opening }).toEqual({
        query,
        opening: expect.stringContaining("In Fenwick the miller Pell"),
      });
    }
  });

  test("'Who is the narrator?': the one the others address by name and the narration never names", async () => {
    const firstPerson = lines(
      6,
      (n) =>
        `On the ${n}th night I walked to the mill with my lantern, and I heard Harrow's cart on the road. "Tom," said my father, "fetch the lantern." I fetched it, and I sat by the fire while Harrow talked. "You are a good lad, Tom," said Harrow.`,
    );
    for (const [mode, query] of [
      ["local", "Who is the narrator?"],
      ["global", "Who tells the story?"],
    ] as const) {
      const { opening } = await ask(`narrator-${mode}`, firstPerson, query, mode);
      expect(opening).toStartWith("The story is told in the first person by **Tom**");
      expect(opening).toContain('"Tom," said my father');
    }
    // Told by no one: the narration never says "I"; told by someone nobody names.
    const thirdPerson = lines(
      8,
      (n) => `On the ${n}th night Harrow walked to the mill. "Tom," said Harrow, "fetch the lantern."`,
    );
    expect((await ask("narrator-third", thirdPerson, "Who is the narrator?")).opening).toStartWith(
      "The story is told in the third person",
    );
    const unnamed = lines(
      8,
      (n) => `On the ${n}th night I walked to the mill, and I heard the cart; I fetched my lantern.`,
    );
    expect((await ask("narrator-unnamed", unnamed, "Who is the narrator?")).opening).toStartWith(
      "The story is told in the first person by a narrator it never names",
    );
  });

  test("'Who wrote this book?' is answered by the front matter's credit, not by a writer in the story", async () => {
    const story = lines(
      12,
      (n) =>
        `In the ${n}th winter the miller Pell read the letter that Harrow wrote to him, and a grave author praised the mill.`,
    );
    const books: [string, string][] = [
      [
        "catalogue",
        `Title: The Miller\n\nAuthor: Agnes Pell Lennox\n\nRelease Date: May 1, 2004\n\n${story}`,
      ],
      [
        "title-page",
        `THE MILLER\n\n[Illustration]\n\nBY\n\nAGNES PELL LENNOX\n\nILLUSTRATED BY TOM HARROW\n\n${story}`,
      ],
      ["by-line", `The Miller\n\nby Agnes Pell Lennox\n\n${story}`],
    ];
    for (const [name, text] of books)
      for (const [mode, query] of [
        ["local", "Who wrote this book?"],
        ["global", "Who is the author?"],
        ["local", "What is the author's name?"],
        ["local", "Who wrote The Miller?"],
      ] as const) {
        const { opening } = await ask(`credit-${name}`, text, query, mode);
        expect({ name, query, opening }).toEqual({
          name,
          query,
          opening: expect.stringMatching(/^\*\*Agnes Pell Lennox\*\*: /),
        });
      }
    // A letter in the story is the story's; a book with no credit says it does not say who wrote it.
    const letter = await ask("credit-letter", story, "Who wrote the letter?");
    expect(letter.opening).toContain("Harrow");
    const none = await ask("credit-none", story, "Who wrote this book?");
    expect(none.opening).toStartWith("The text does not say this directly.");
  });

  test("a broad answer's recurring subjects are the book's words, not its people's names or its verbs", () => {
    // Each community lists its own recurring words; a name of another community's people is no subject.
    const report = (title: string, words: string): ReportRow =>
      ({ title, summary: `This community has 3 entities. Recurring words: ${words}.` }) as ReportRow;
    const reports = [
      report("Elizabeth, Darcy and Jane", "letters, brother, ball"),
      report("Wickham, Lydia and Brighton", "elizabeth, letters, brother, ball"),
      report("Collins and Charlotte", "elizabeth, letters, parsonage"),
    ];
    expect(recurring(reports)).toEqual(["letters", "ball", "brother"]);
    // A description's common verbs and adverbs recur in every community: they are no subject either.
    const texts = [
      "He found the letter along the road and called it a ruin.",
      "She found a letter and called it a ruin along the way.",
    ];
    expect(recurringWords(texts, [])).toEqual(["letter", "ruin"]);
  });

  test("a time of day answers 'at what time' however it is written: o’clock with a curly apostrophe, in words, in digits", async () => {
    for (const [name, time] of [
      ["clock-curly", "nine o’clock"],
      ["clock-straight", "nine o'clock"],
      ["time-half", "half past one"],
      ["time-quarter", "a quarter to eight"],
      ["time-noon", "noon"],
      ["time-digits", "10:30"],
    ]) {
      const text = [
        "Pell set out for Fenwick market on the Saturday with a cart of salt.",
        `Pell reached Fenwick market at ${time}, wet through from the ford.`,
        "Nell Pell kept the accounts at home and waited for news of the market.",
        "Harrow said that Pell would reach Fenwick market before the rain, and Pell laughed at him.",
      ].join(" ");
      const { opening } = await ask(name, text, "At what time did Pell reach Fenwick market?");
      expect({ name, opening }).toEqual({ name, opening: expect.stringContaining(time) });
      expect(opening).not.toContain("does not say");
    }
  });

  // Local and global alike: the nearest passage, then the sentence after it, said once.
  for (const [mode, name, sentences, query, nearest, after] of [
    [
      "local",
      "near-miss",
      [
        "The mate fell dead on the rocks below the harbour wall, shot from the cliff above.",
        "It was Harrow who had fired, from behind the gorse, and he ran before anyone saw his face.",
        "Nell Pell kept the accounts at home and waited for news of the market.",
        "Pell sold salt at Fenwick market and bought wool for the winter.",
      ],
      "Who shot the mate on the rocks?",
      "The nearest passage is: The mate fell dead on the rocks",
      "It was Harrow who had fired",
    ],
    [
      "global",
      "near-miss-global",
      [
        "Pell sold salt at Fenwick market and bought wool for the winter.",
        "“For thirty years,” said Harrow to Pell, “I have worked the river in flood and in drought.”",
        "“I never saw good come of kindness yet; strike first, that is my rule.”",
        "Nell Pell kept the accounts at home and waited for news of the market.",
        "Harrow drove the cart to Fenwick every morning, and Pell paid him on Saturdays.",
      ],
      "What hard lesson does Harrow say his years on the river have taught him?",
      "The nearest passage is: “For thirty years,” said Harrow",
      "strike first, that is my rule",
    ],
  ] as const)
    test(`a ${mode} near miss is given with the sentence after it, where the answer often is, said once`, async () => {
      const { opening, response } = await ask(name, sentences.join(" "), query, mode);
      expect(opening).toContain(nearest);
      expect(opening).toContain(after);
      // Said once: the sentence the opening reads on to is not a supporting passage as well.
      expect(response.split(after).length - 1).toBe(1);
    });

  test("a quoted question with its attribution is still a question, not the answer", async () => {
    const text = [
      "'What did you sell at Fenwick market, Pell?' asked Nell.",
      "Pell sold salt and wool at Fenwick market every Saturday.",
      "Nell kept the accounts.",
    ].join(" ");
    const { opening } = await ask("asked", text, "What did Pell sell at Fenwick market?");
    expect(opening).toStartWith("Pell sold salt and wool");
  });

  test("whose name a question asks decides its type, and 'Nell, Pell's niece' states the relation", async () => {
    const text = [
      "Old Pell and Harrow went up to the Fenwick fair, and Pell's niece went with them.",
      "At the fair Harrow bought a horse, and Pell's niece laughed at him.",
      "Nell, Pell's niece, kept the accounts of the mill.",
      "'Come home,' said Nell at dusk.",
    ].join(" ");
    for (const query of ["What is Pell's niece's name?", "Who is Pell's niece?"]) {
      const { opening } = await ask(`niece-${query.length}`, text, query);
      expect(opening).toContain("Nell, Pell's niece");
    }
  });

  test("who is X, in a list of characters: 'Tim Pell (\"Little Tim\"), a miller's boy'", async () => {
    const text = [
      "Little Tim ran to the fair with Harrow and Nell every autumn.",
      "Harrow carried Little Tim home on his shoulder when the fair was done.",
      'Tim Pell ("Little Tim"), a miller\'s boy, son of old Pell.',
    ].join("\n\n");
    const { opening } = await ask("alias", text, "Who is Little Tim?");
    expect(opening).toContain("a miller's boy");
  });

  test("whose opinion: 'What does Pell think of Harrow?' is answered by Pell's words, not Harrow's", async () => {
    const text = [
      "'Pell will want his salt by Saturday,' said Harrow, and whipped up the horse.",
      "'Harrow is the laziest carter in the county,' said Pell to the vicar.",
      "The vicar laughed.",
    ].join(" ");
    const { opening } = await ask("holder", text, "What does Pell think of Harrow?");
    expect(opening).toContain("the laziest carter");
  });

  test("how old is X: an age said of someone else is no answer; one X says of himself is", async () => {
    const text = [
      "Old Pell kept the mill at Fenwick, and the mill kept Pell.",
      "Past the mill every morning went a grey-haired carter, nearly seventy years of age.",
      "'Fenwick has not changed in my time,' said Harrow, 'and I am sixty years old.'",
      "Harrow sold his salt to Pell every Saturday.",
    ].join(" ");
    const pell = await ask("age-pell", text, "How old is Pell?");
    expect(pell.opening).toStartWith("The text does not say this directly");
    const harrow = await ask("age-harrow", text, "How old is Harrow?");
    expect(harrow.opening).toContain("sixty years old");
    expect(harrow.opening).not.toStartWith("The text does not say");
  });

  test("what X's estate is worth: a sum, not a place", async () => {
    const text = [
      "Pell's estate in the valley was called Fenwick Park, and Pell's estate lay by the river for a mile.",
      "It was worth two thousand a year to him, and would go to a cousin when he died.",
      "Harrow farmed the land next to it.",
    ].join(" ");
    const { opening } = await ask("worth", text, "What is Pell's estate worth a year?");
    expect(opening).toContain("two thousand a year");
  });
});
