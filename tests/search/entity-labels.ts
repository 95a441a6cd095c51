/**
 * A hand-labelled set for offline entity extraction over the committed fixture staves: every person,
 * place and organisation the two staves name at least twice (the extractor's floor), with the other
 * forms the text uses for it, and the names that are scored neither way (generic figure references,
 * the family name, epithets, events). scoreEntities gives precision, recall and F1 of an index's entities
 * against it: an entity counts as right when one of its forms is a labelled entity of the same type,
 * and a second entity for the same labelled one (aliases left unmerged) counts as wrong.
 */

export type LabelledType = "person" | "geo" | "organization";

export interface Labelled {
  name: string;
  type: LabelledType;
  aliases: string[];
}

export const LABELLED: Labelled[] = [
  { name: "Scrooge", type: "person", aliases: ["Ebenezer Scrooge", "Mr. Scrooge", "Uncle Scrooge"] },
  { name: "Jacob Marley", type: "person", aliases: ["Marley", "Jacob", "Mr. Marley"] },
  { name: "Bob Cratchit", type: "person", aliases: ["Bob"] },
  { name: "Mrs. Cratchit", type: "person", aliases: [] },
  { name: "Tiny Tim", type: "person", aliases: ["Tim"] },
  { name: "Martha", type: "person", aliases: [] },
  { name: "Fred", type: "person", aliases: [] },
  {
    name: "Peter Cratchit",
    type: "person",
    aliases: ["Peter", "Master Peter", "Master Peter Cratchit"],
  },
  { name: "Topper", type: "person", aliases: [] },
  { name: "Belinda", type: "person", aliases: ["Miss Belinda", "Belinda Cratchit"] },
  { name: "Ghost of Christmas Present", type: "person", aliases: [] },
  { name: "Lord Mayor", type: "person", aliases: [] },
  { name: "City of London", type: "geo", aliases: ["City", "London"] },
  { name: "Parliament", type: "organization", aliases: [] },
];

/** Scored neither way: references that are not one entity, and types outside person/place/organisation. */
export const UNSCORED = new Set(
  [
    "Ghost",
    "Spirit",
    "Phantom",
    "Cratchits",
    "Cratchit",
    "Founder",
    "Christmas",
    "Christmas Day",
    "Feast",
    "Day",
  ].map((n) => n.toUpperCase()),
);

export interface EntityScore {
  precision: number;
  recall: number;
  f1: number;
  right: string[];
  wrong: string[];
  missed: string[];
}

export function scoreEntities(entities: { name: string; type: string }[]): EntityScore {
  const byForm = new Map<string, Labelled>();
  for (const l of LABELLED) for (const form of [l.name, ...l.aliases]) byForm.set(form.toUpperCase(), l);
  const found = new Set<Labelled>();
  const right: string[] = [];
  const wrong: string[] = [];
  for (const e of entities) {
    if (!["person", "geo", "organization"].includes(e.type)) continue;
    const key = e.name.toUpperCase();
    if (UNSCORED.has(key)) continue;
    const label = byForm.get(key);
    if (label && label.type === e.type && !found.has(label)) {
      found.add(label);
      right.push(e.name);
    } else wrong.push(`${e.name} (${e.type})`);
  }
  const missed = LABELLED.filter((l) => !found.has(l)).map((l) => l.name);
  const precision = right.length / Math.max(1, right.length + wrong.length);
  const recall = found.size / LABELLED.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, right, wrong, missed };
}
