/**
 * The turns family's routes as the terminal uses them: sessions, history, attachments, skills and
 * cancellation (the turn stream itself is stream.ts). Thin: one function a route.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import type {
  Attachment,
  Cancellation,
  Session,
  SessionList,
  SkillList,
  TurnHistory,
} from "../../schemas/turns.ts";
import { type Api, ApiError } from "../api.ts";

const at = (id: string) => encodeURIComponent(id);

/**
 * A title from the first line of text of the first message (the sessions list shows it): a code fence
 * (```python) is markup, not text, so a message that opens with code is titled by its first code line.
 */
export function titleOf(text: string): string {
  const line =
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !/^(```|~~~)/.test(l)) ?? "terminal session";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

export const turnsClient = (api: Api) => ({
  createSession: (title: string) => api.send<Session>("POST", "/api/sessions", { title }),
  session: (id: string) => api.get<Session>(`/api/sessions/${at(id)}`),
  sessions: (limit = 20) => api.get<SessionList>(`/api/sessions?limit=${limit}&archived=false`),
  /** Every committed turn of the session, oldest first (paged through). */
  async history(id: string) {
    const items: TurnHistory["items"] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await api.get<TurnHistory>(`/api/sessions/${at(id)}/turns?limit=200&offset=${offset}`);
      items.push(...page.items);
      if (page.items.length < 200) return items;
    }
  },
  skills: () => api.get<SkillList>("/api/skills"),
  cancel: (runId: string) => api.send<Cancellation>("PUT", `/api/runs/${at(runId)}/cancellation`),
  /** Uploads a local file as an attachment; a path that is not a readable file is refused here. */
  async attach(path: string): Promise<Attachment> {
    let size: number;
    try {
      const stat = statSync(path);
      if (!stat.isFile()) throw new Error("not a file");
      size = stat.size;
    } catch (error) {
      throw new ApiError("invalid_file", `cannot attach ${path}: ${(error as Error).message}`);
    }
    const bytes = size === 0 ? new Uint8Array() : readFileSync(path);
    return api.upload<Attachment>("/api/attachments", new Blob([bytes]), basename(path));
  },
});

export type TurnsClient = ReturnType<typeof turnsClient>;
