/**
 * The loop of the PostgreSQL ÷ SQLite benches (auth-db.ts, families-db.ts): every path warmed on both
 * engines, then timed per round with the engines' order alternating (neither always runs on a warmer
 * machine), statements per call read from each engine's counter (count-statements.ts), and one line per
 * path: median ms per call, statements per call, the ratio.
 */
import { fmt, median } from "./stats.ts";

export interface RatioEngine {
  name: string;
  counter: { count: number };
}

export async function printEngineRatios<E extends RatioEngine>(
  title: string,
  engines: E[],
  subjects: Record<string, (e: E) => Promise<unknown>>,
  options: { rounds: number; callsOf: (name: string) => number },
): Promise<void> {
  const perCall: Record<string, Record<string, number[]>> = {};
  const statements: Record<string, Record<string, number>> = {};
  for (const name of Object.keys(subjects)) {
    perCall[name] = Object.fromEntries(engines.map((e) => [e.name, []]));
    statements[name] = {};
  }
  for (const e of engines)
    for (const run of Object.values(subjects)) for (let i = 0; i < 3; i++) await run(e);
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, run] of Object.entries(subjects)) {
      const order = round % 2 === 0 ? engines : [...engines].reverse();
      for (const e of order) {
        const calls = options.callsOf(name);
        e.counter.count = 0;
        const started = performance.now();
        for (let i = 0; i < calls; i++) await run(e);
        perCall[name]?.[e.name]?.push((performance.now() - started) / calls);
        (statements[name] as Record<string, number>)[e.name] = e.counter.count / calls;
      }
    }
  }
  console.log(`${title}, median ms per call (statements per call), PostgreSQL ÷ SQLite`);
  const width = Math.max(...Object.keys(subjects).map((n) => n.length)) + 1;
  for (const name of Object.keys(subjects)) {
    const lite = median(perCall[name]?.sqlite ?? []);
    const pg = median(perCall[name]?.postgres ?? []);
    const st = statements[name] ?? {};
    console.log(
      `${name.padEnd(width)} sqlite ${fmt(lite, 3).padStart(8)} ms (${fmt(st.sqlite ?? 0, 1)})   postgres ${fmt(pg, 3).padStart(8)} ms (${fmt(st.postgres ?? 0, 1)})   ratio ${fmt(pg / lite, 2)}x`,
    );
  }
}
