/** The five system skills as bounded Skill Cards. */
import { Elysia } from "elysia";
import { TurnsError } from "../../schemas/common.ts";
import { SkillCard, SkillList, SkillParams } from "../../schemas/turns.ts";
import type { AppContext } from "../context.ts";
import { AppError } from "../http/errors.ts";
import type { TurnServices } from "./services.ts";
import { SKILLS, skillById, skillCard } from "./skills/catalog.ts";

const tags = ["turns"];

export function skillsRoutes(ctx: AppContext, services: TurnServices) {
  return new Elysia({ name: "atrium/turns/skills" })
    .use(ctx.identity)
    .get(
      "/api/skills",
      () => {
        services.analytics.capture("skill_listed", { count: SKILLS.length });
        return { items: SKILLS.map(skillCard) };
      },
      { response: { 200: SkillList }, detail: { summary: "Skill Cards of the five system Skills", tags } },
    )
    .get(
      "/api/skills/:skill_id",
      ({ params }) => {
        const skill = skillById(params.skill_id);
        if (!skill) throw AppError.notFound("Skill not found");
        return skillCard(skill);
      },
      {
        params: SkillParams,
        response: { 200: SkillCard, 404: TurnsError },
        detail: { summary: "One Skill Card", tags },
      },
    );
}
