/**
 * /api/attach: a Server-Sent Events view of one session's events for any number of clients. A client
 * sees other clients' turns, compaction and queue changes live; `Last-Event-ID` replays what it missed
 * from the session's bounded buffer. Only sessions the caller owns can be attached (else 404).
 */
import { AppError } from "../../http/errors.ts";
import type { SseFrame } from "../../http/sse.ts";
import type { Producer } from "../../http/stream.ts";
import { ownerPaths, publicSessionFile } from "../paths.ts";
import type { RuntimeHost } from "../runtime/host.ts";
import type { BufferedEvent } from "../runtime/live-session.ts";
import { AsyncQueue } from "../runtime/queue.ts";
import type { ChatStore } from "../store.ts";
import { type SessionQuery, sessionTarget } from "./input.ts";

export class AttachService {
  constructor(
    private readonly host: RuntimeHost,
    private readonly store: ChatStore,
    private readonly dataDir: string,
  ) {}

  async attach(owner: string, query: SessionQuery, lastEventId?: number): Promise<Producer<SseFrame>> {
    const target = sessionTarget(ownerPaths(this.dataDir, owner).sessionsDir, query);
    if (!target.sessionId && !target.sessionFile)
      throw new AppError("invalid", "Invalid request: body: sessionId or sessionFile is required", {
        issues: [
          { loc: ["body", "sessionId"], msg: "sessionId or sessionFile is required", type: "missing" },
        ],
      });
    const known =
      this.host.find(owner, target) ??
      (target.sessionId ? this.store.session(owner, target.sessionId) : undefined) ??
      (target.sessionFile ? this.store.sessionByFile(owner, target.sessionFile) : undefined);
    if (!known) throw new AppError("not_found", "No such session");
    const { live } = await this.host.open(owner, target);
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
        live.lastUsed = Date.now();
      }
    };
  }
}

function frame({ seq, event }: BufferedEvent): SseFrame {
  return { id: String(seq), event: event.type, data: event };
}
