/**
 * Dates as the views show them: a moment as a short local date and time (session lists: four chats
 * titled "hello" are told apart by when they were last used).
 */

/** A timestamp as a short local date and time ("28 Nov 2026, 00:25"); undefined for none or nonsense. */
export function shortDate(iso: string | undefined): string | undefined {
  if (!iso) return undefined;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return undefined;
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
