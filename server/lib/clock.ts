/**
 * The server's clock in one place: a `Clock` is what a service takes when a test needs to fix the time,
 * and `isoNow` is every timestamp the server stores or sends (ISO 8601, UTC, milliseconds).
 */
export type Clock = () => number;

export function isoNow(clock: Clock = Date.now): string {
  return new Date(clock()).toISOString();
}
