/**
 * A count with its noun in the right number, for every side that writes one for people (the web UI,
 * the terminal client, the server's descriptions): "1 document", "2 documents", "1 entity".
 */

/** `count(1, "document")` is "1 document", `count(3, "document")` "3 documents"; irregular plurals given. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
