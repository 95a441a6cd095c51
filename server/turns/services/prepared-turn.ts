/**
 * What preparing a turn works with, step after step (turn-preparation.ts): the submission, its resolved
 * skills, attachments and model, the claimed run, and the failure every step may end with.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { TurnEvent } from "../runtime/events.ts";
import type { LiveRun } from "../runtime/live-run.ts";
import { SKILLS, type Skill } from "../skills/catalog.ts";
import type { AttachmentRow } from "../stores/assets.ts";
import type { TurnInput } from "./turn-input.ts";

/** A preparation failure: the stream answers `turn_error` (this message and code) then `turn_finish`. */
export class TurnPreparationError extends Error {
  override name = "TurnPreparationError";
  constructor(
    message: string,
    readonly code: string,
    /** What happened, in a sentence a person understands (the spec's `message` is terse). */
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** One POST of a turn: who asks, in which session, under which Idempotency-Key, with what input. */
export interface TurnSubmission {
  owner: string;
  sessionId: string;
  key: string;
  input: TurnInput;
}

/** What a POST streams after preparation: a replay of the committed run, or a live run to follow. */
export type Prepared = { kind: "replay"; events: TurnEvent[] } | { kind: "live"; live: LiveRun };

/** What a turn runs with once resolved: its skills, attachments, model. */
export interface ResolvedTurn {
  /** The explicit selection, undefined when none was made (any skill may load). */
  selected: Skill[] | undefined;
  attachments: AttachmentRow[];
  /** The single text attachment, bound to the Python variable `context`. */
  bound: AttachmentRow | undefined;
  context: string | undefined;
  model: Model<Api>;
}

/** The skills a turn may load: the explicit selection, else the whole catalog. */
export const loadableSkills = (resolved: ResolvedTurn): Skill[] => resolved.selected ?? [...SKILLS];

/** A claimed run: its row, its live readers, its trace. */
export interface TurnClaim {
  run: { id: string; owner_id: string; session_id: string };
  live: LiveRun;
  traceId: string | null;
}
