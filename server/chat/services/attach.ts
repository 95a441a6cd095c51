/**
 * /api/attach: a Server-Sent Events view of one session's events for any number of clients. A client
 * sees other clients' turns, compaction and queue changes live; `Last-Event-ID` replays what it missed
 * from the session's bounded buffer. Only sessions the caller owns can be attached (else 404).
 */
import { AppError, invalidRequest } from "../../http/errors.ts";
import type { SseFrame } from "../../http/sse.ts";
import type { Producer } from "../../http/stream.ts";
import { chatFolders, publicSessionFile } from "../runtime/chat-folders.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import type { BufferedEvent } from "../runtime/live-session.ts";
import { AsyncQueue } from "../runtime/queue.ts";
import type { ChatSessionStore } from "../stores/sessions.ts";
import { type SessionQuery, sessionTarget } from "./input.ts";

export interface ChatAttachServiceDeps {
  host: Pick<ChatRuntimeHost, "find" | "open">;
  sessions: Pick<ChatSessionStore, "get" | "byFile">;
  dataDir: string;
}

export class ChatAttachService {
  constructor(private readonly deps: ChatAttachServiceDeps) {}

  async attach(owner: string, query: SessionQuery, lastEventId?: number): Promise<Producer<SseFrame>> {
    const { host, sessions, dataDir } = this.deps;
    const target = sessionTarget(chatFolders(dataDir, owner).sessionsDir, query);
    // Not a schema rule: an empty sessionFile means "none" on every chat route, so this is checked
    // after it was read, and the message names both fields.
    if (!target.sessionId && !target.sessionFile)
      throw invalidRequest([
        { loc: ["body", "sessionId"], msg: "sessionId or sessionFile is required", type: "missing" },
      ]);
    // Any mirrored session of the caller may be attached, by id or (when the id is unknown) by file.
    const known =
      host.find(owner, target) ??
      (target.sessionId ? await sessions.get(owner, target.sessionId) : undefined) ??
      (target.sessionFile ? await sessions.byFile(owner, target.sessionFile) : undefined);
    if (!known) throw new AppError("not_found", "No such session");
    const { live } = await host.open(owner, target);
    return async function* () {
      live.attached++;
      const queue = new AsyncQueue<BufferedEvent>();
      const stop = live.listen((event, seq) => queue.push({ seq, event }));
      let sent = lastEventId ?? live.lastSeq;
      try {
        yield {
          event: "attached",
          data: {
            sessionId: live.sessionId,
            sessionFile: publicSessionFile(live.sessionFile),
            lastEventId: live.lastSeq,
          },
        };
        if (lastEventId !== undefined) {
          for (const b of live.since(lastEventId)) {
            sent = b.seq;
            yield frame(b);
          }
        }
        for await (const b of queue) {
          if (b.seq <= sent) continue;
          sent = b.seq;
          yield frame(b);
        }
      } finally {
        stop();
        live.attached--;
        live.touch();
      }
    };
  }
}

function frame({ seq, event }: BufferedEvent): SseFrame {
  return { id: String(seq), event: event.type, data: event };
}
