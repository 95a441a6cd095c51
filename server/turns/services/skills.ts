/** The five system skills as bounded Skill Cards (the catalog is skills/catalog.ts). */
import { AppError } from "../../http/errors.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import { SKILLS, skillById, skillCard } from "../skills/catalog.ts";

export class TurnSkillService {
  constructor(private readonly deps: { analytics: Pick<TurnAnalytics, "capture"> }) {}

  list() {
    this.deps.analytics.capture("skill_listed", { count: SKILLS.length });
    return { items: SKILLS.map(skillCard) };
  }

  card(id: string) {
    const skill = skillById(id);
    if (!skill) throw AppError.notFound("Skill not found");
    return skillCard(skill);
  }
}
