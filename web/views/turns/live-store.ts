/**
 * The turn each session is running, remembered for this tab (sessionStorage) until it ends. Leaving a
 * session (or the Turns view, or reloading) drops the page's stream but not the turn: the server keeps
 * running it, and a POST with the same Idempotency-Key and input first replays what it emitted, then
 * follows it live. So coming back to the session POSTs the remembered request again and the turn is
 * shown as far as it has got, still streaming, with Cancel working.
 */
import type { LiveTurnRequest } from "./live-turn.tsx";

const KEY = "atrium.turns.live";

function all(): Record<string, LiveTurnRequest> {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? "{}") as Record<string, LiveTurnRequest>;
  } catch {
    return {};
  }
}

function save(turns: Record<string, LiveTurnRequest>): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(turns));
  } catch {
    // Storage refused: the turn still runs; only coming back to it is lost.
  }
}

export function liveTurnOf(sessionId: string): LiveTurnRequest | undefined {
  return all()[sessionId];
}

export function rememberLiveTurn(turn: LiveTurnRequest): void {
  save({ ...all(), [turn.sessionId]: turn });
}

export function forgetLiveTurn(sessionId: string): void {
  const { [sessionId]: _, ...rest } = all();
  save(rest);
}
