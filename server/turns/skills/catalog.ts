/**
 * The five system skills: SKILL.md files with frontmatter (name, description, metadata.version) and
 * resources, embedded by static text imports so the compiled binary carries them.
 */
import rlmRecipe from "./atrium-rlm/limits.md" with { type: "text" };
import rlmSkill from "./atrium-rlm/SKILL.md" with { type: "text" };
import dataRecipes from "./data-analysis/recipes.md" with { type: "text" };
import dataSkill from "./data-analysis/SKILL.md" with { type: "text" };
import chunking from "./long-context/chunking.md" with { type: "text" };
import longSkill from "./long-context/SKILL.md" with { type: "text" };
import reportSkill from "./report-builder/SKILL.md" with { type: "text" };
import template from "./report-builder/template.md" with { type: "text" };
import filesPaths from "./workspace-files/paths.md" with { type: "text" };
import filesSkill from "./workspace-files/SKILL.md" with { type: "text" };

export interface Skill {
  id: string;
  name: string;
  description: string;
  version: string;
  trust: "system";
  affordances: string[];
  /** The instructions (SKILL.md without its frontmatter). */
  body: string;
  resources: Record<string, string>;
}

const SOURCES: [string, string, Record<string, string>][] = [
  ["data-analysis", dataSkill, { "recipes.md": dataRecipes }],
  ["atrium-rlm", rlmSkill, { "limits.md": rlmRecipe }],
  ["long-context", longSkill, { "chunking.md": chunking }],
  ["report-builder", reportSkill, { "template.md": template }],
  ["workspace-files", filesSkill, { "paths.md": filesPaths }],
];

/** Reads the small YAML subset our frontmatter uses: `key: value` and one nested `metadata:` map. */
export function parseFrontmatter(text: string): { meta: Record<string, string>; body: string } {
  const match = text.match(/^---\n([\s\S]*?)\n---\n?([\s\S]*)$/);
  if (!match) throw new Error("SKILL.md has no frontmatter");
  const meta: Record<string, string> = {};
  let prefix = "";
  for (const line of (match[1] as string).split("\n")) {
    const kv = line.match(/^(\s*)([A-Za-z_][\w-]*):\s*(.*)$/);
    if (!kv) continue;
    const [, indent, key, raw] = kv as unknown as [string, string, string, string];
    if (!indent) prefix = "";
    if (raw === "") {
      prefix = `${key}.`;
      continue;
    }
    meta[`${indent ? prefix : ""}${key}`] = raw.replace(/^"(.*)"$/, "$1");
  }
  return { meta, body: (match[2] as string).trim() };
}

function load(id: string, text: string, resources: Record<string, string>): Skill {
  const { meta, body } = parseFrontmatter(text);
  const name = meta.name;
  const description = meta.description;
  const version = meta["metadata.version"];
  if (!name || !description || !version)
    throw new Error(`skill ${id}: name, description and metadata.version are required`);
  const affordances = (meta["metadata.affordances"] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return { id, name, description, version, trust: "system", affordances, body, resources };
}

export const SKILLS: readonly Skill[] = SOURCES.map(([id, text, resources]) => load(id, text, resources));

export function skillById(id: string): Skill | undefined {
  return SKILLS.find((s) => s.id === id);
}

export function skillCard(skill: Skill) {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    version: skill.version,
    trust: skill.trust,
    resources: Object.keys(skill.resources),
  };
}
