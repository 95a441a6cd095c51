/**
 * The context a search answered from, beside the answer: each `context_data` table (local: reports,
 * entities, relationships, claims, sources; global: reports, points) as a captioned table, rows the
 * answer used first. Long cells are clipped (the full text is in the cell's title).
 */
import type { JSX } from "preact";
import { useEffect } from "preact/hooks";

type Row = Record<string, unknown>;
const CLIP = 240;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A row an answer's citation link points at: highlighted and scrolled into view. */
export interface Cited {
  table: string;
  id: string;
}

function Table({ name, rows, cited }: { name: string; rows: Row[]; cited?: string }): JSX.Element {
  const columns = Object.keys(rows[0] ?? {}).filter((c) => c !== "in_context");
  const ordered = [...rows].sort((a, b) => Number(b.in_context === true) - Number(a.in_context === true));
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a wide table scrolls, so keyboard users must reach it
    <section class="table-wrap" tabIndex={0} aria-label={`${name} table`}>
      <table class="context-table" data-table={name}>
        <caption>
          {name} <span class="muted">({rows.length})</span>
        </caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {ordered.map((row, i) => (
            <tr
              key={i}
              data-id={cell(row.id)}
              class={
                [row.in_context === false ? "muted" : "", cited === cell(row.id) ? "cited" : ""]
                  .join(" ")
                  .trim() || undefined
              }
              aria-current={cited === cell(row.id) ? "true" : undefined}
            >
              {columns.map((c) => {
                const text = cell(row[c]);
                return (
                  <td key={c} title={text.length > CLIP ? text : undefined}>
                    {text.length > CLIP ? `${text.slice(0, CLIP)}…` : text}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function ContextTables({ data, cited }: { data: Record<string, Row[]>; cited?: Cited }): JSX.Element {
  const tables = Object.entries(data).filter(([, rows]) => rows.length > 0);
  useEffect(() => {
    if (!cited) return;
    document
      .querySelector(`table[data-table="${CSS.escape(cited.table)}"] tr[data-id="${CSS.escape(cited.id)}"]`)
      ?.scrollIntoView({ block: "nearest" });
  }, [cited]);
  if (tables.length === 0) return <p class="empty">No context rows for this question.</p>;
  return (
    <div class="context-tables">
      {tables.map(([name, rows]) => (
        <Table key={name} name={name} rows={rows} cited={cited?.table === name ? cited.id : undefined} />
      ))}
    </div>
  );
}
