/**
 * Memory proposals of a committed turn (`propose_memory`), promoted best-effort into the owner's
 * workspace: one Markdown file per category. A failure is logged, never the turn's.
 */
import type { Logger } from "../../log.ts";
import type { TurnFileService } from "./files.ts";

export interface Memory {
  category: string;
  text: string;
}

export async function promoteMemories(
  deps: { files: Pick<TurnFileService, "forOwner">; log: Logger },
  owner: string,
  memories: Memory[],
): Promise<void> {
  if (memories.length === 0) return;
  try {
    const files = deps.files.forOwner(owner);
    for (const m of memories)
      await files.append(`memories/${m.category}.md`, `- ${m.text.replaceAll("\n", " ")}\n`);
  } catch (error) {
    deps.log.warn("memory promotion failed", { error: (error as Error).message });
  }
}
