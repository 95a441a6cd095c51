/**
 * A turn request's input before it runs: what the route's schemas leave to check (a text that is not
 * blank, each skill selected once), and the fingerprint an Idempotency-Key is bound to.
 */
import { createHash } from "node:crypto";
import { AppError } from "../../http/errors.ts";

export interface TurnInput {
  text: string;
  attachment_ids: string[];
  skill_selections: { id: string; expected_version: string }[];
}

/** The request body as the route's schema (TurnRequest) admitted it. */
export interface TurnBody {
  text: string;
  attachment_ids?: string[];
  skill_selections?: { id: string; expected_version: string }[];
}

/**
 * The input of a validated body, or a 422 before streaming: a blank text (`invalid_request`), a skill
 * selected twice (`invalid_skill_selection`, as the schema's own failures of `skill_selections`).
 */
export function turnInput(body: TurnBody): TurnInput {
  if (body.text.trim() === "") throw new AppError("invalid", "text must not be empty");
  const selections = body.skill_selections ?? [];
  const seen = new Set<string>();
  for (const { id } of selections) {
    if (seen.has(id))
      throw new AppError("invalid", `skill_selections has '${id}' twice`, {
        code: "invalid_skill_selection",
      });
    seen.add(id);
  }
  return {
    text: body.text,
    attachment_ids: body.attachment_ids ?? [],
    skill_selections: selections.map(({ id, expected_version }) => ({ id, expected_version })),
  };
}

/** SHA-256 of the canonical JSON of the input: what an Idempotency-Key is bound to. */
export function fingerprint(input: TurnInput): string {
  const canonical = JSON.stringify({
    attachment_ids: input.attachment_ids,
    skill_selections: input.skill_selections.map((s) => ({ expected_version: s.expected_version, id: s.id })),
    text: input.text,
  });
  return createHash("sha256").update(canonical).digest("hex");
}
