/** The five system skills as bounded Skill Cards. */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import { SkillCard, SkillList, SkillParams } from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import type { TurnSkillService } from "../services/skills.ts";

const tags = ["turns"];

export function skillsRoutes(ctx: AppContext, { skills }: { skills: TurnSkillService }) {
  return new Elysia({ name: "atrium/turns/skills" })
    .use(ctx.identity)
    .get("/api/skills", () => skills.list(), {
      response: { 200: SkillList },
      detail: { summary: "Skill Cards of the five system Skills", tags },
    })
    .get("/api/skills/:skill_id", ({ params }) => skills.card(params.skill_id), {
      params: SkillParams,
      response: { 200: SkillCard, 404: TurnsError },
      detail: { summary: "One Skill Card", tags },
    });
}
