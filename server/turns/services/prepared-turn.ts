/**
 * What starting a turn works with, step after step (turn-start.ts, turn-preparation.ts): the submission
 * and its input, its resolved skills, attachments and model, the claimed run, the turn's place in the
 * sandbox line, and the failure every step may end with.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { TurnEvent } from "../runtime/events.ts";
import type { LiveRun } from "../runtime/live-run.ts";
import { SKILLS, type Skill } from "../skills/catalog.ts";
import type { AttachmentRow } from "../stores/assets.ts";
import type { Followable } from "./turn-instances.ts";

/** A turn's input once checked (turn-start.ts): what its Idempotency-Key fingerprint covers. */
export interface TurnInput {
  text: string;
  attachment_ids: string[];
  skill_selections: { id: string; expected_version: string }[];
  /** The root model the request named (`provider/model`, one the server allows); absent: the policy's. */
  model?: string;
}

/** A preparation failure: the stream answers `turn_error` (this message and code) then `turn_finish`. */
export class TurnPreparationError extends Error {
  override name = "TurnPreparationError";
  constructor(
    message: string,
    readonly code: string,
    /** What happened, in a sentence a person understands (the contract's `message` is terse). */
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
export type Prepared = { kind: "replay"; events: TurnEvent[] } | { kind: "live"; live: Followable };

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

/** A turn's place in the sandbox line, as the pool reports it; the keep-alives tell it (turn-start.ts). */
export class SandboxLine {
  /** Turns ahead of this one; undefined while not in line. */
  ahead: number | undefined;
  /** The interpreter this turn got is still starting. */
  starting = false;
  private enteredAt = 0;
  private waited = 0;
  private wake: (() => void) | undefined;

  /** The pool's report: `ahead` turns before this one, or undefined once out of the line. */
  readonly report = (ahead: number | undefined): void => {
    if (ahead !== undefined && this.ahead === undefined) this.enteredAt = Date.now();
    if (ahead === undefined && this.ahead !== undefined) this.waited += Date.now() - this.enteredAt;
    this.ahead = ahead;
    this.wake?.();
  };

  /** The pool's report that the interpreter handed to this turn is still starting. */
  readonly reportStarting = (): void => {
    this.starting = true;
    this.wake?.();
  };

  /** Milliseconds spent in line so far. */
  waitedMs(now = Date.now()): number {
    return this.waited + (this.ahead === undefined ? 0 : now - this.enteredAt);
  }

  /** Resolves at the next report. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }
}
