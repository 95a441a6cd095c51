/**
 * The chosen index's graph (GET /search/indexes/{index}/graph): entities sized by degree and coloured by
 * community, relationships as edges, drawn with sigma (loaded as its own chunk when this panel mounts).
 * Clicking an entity, or finding it by name (the keyboard's way in), shows its description, the passages
 * that mention it and its neighbours, with "What about X?" to ask about it in the search box.
 */
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../lib/api.ts";
import { ErrorLine, useLoad } from "../common.tsx";
import type { DrawnGraph, GraphColumns } from "./graph-canvas.ts";

/** graph-canvas.ts's DRAWN_EDGES, known here without loading the chunk. */
const DRAWN_EDGES = 12_000;

interface EntityDetails {
  id: number;
  name: string;
  type: string;
  description: string;
  degree: number;
  sources: { id: number; document: string; text: string }[];
  related: { id: number; name: string; weight: number }[];
}

export function IndexGraph(props: { index: string; onAsk: (question: string) => void }): JSX.Element {
  const base = `/search/indexes/${encodeURIComponent(props.index)}/graph`;
  const loaded = useLoad<GraphColumns>(base);
  const host = useRef<HTMLDivElement>(null);
  const drawn = useRef<DrawnGraph | undefined>(undefined);
  const [painted, setPainted] = useState(false);
  const [complete, setComplete] = useState(false);
  const [entity, setEntity] = useState<EntityDetails>();
  const [find, setFind] = useState("");
  const [error, setError] = useState<unknown>();
  const data = loaded.data;

  const show = async (position: number | undefined) => {
    setError(undefined);
    void drawn.current?.select(position);
    const id = position === undefined ? undefined : data?.nodes.id[position];
    if (id === undefined) {
      setEntity(undefined);
      return;
    }
    try {
      setEntity(await api<EntityDetails>(`${base}/entities/${id}`));
    } catch (e) {
      setError(e);
    }
  };
  const showRef = useRef(show);
  showRef.current = show;

  useEffect(() => {
    const element = host.current;
    if (!data || !element || data.nodes.id.length === 0) return;
    let cancelled = false;
    setPainted(false);
    setComplete(false);
    void import("./graph-canvas.ts")
      .then(({ drawGraph }) => {
        if (cancelled) return;
        drawn.current = drawGraph(element, data, {
          onClick: (position) => void showRef.current(position),
          onPainted: () => setPainted(true),
          onComplete: () => setComplete(true),
        });
      })
      .catch((e) => setError(e));
    return () => {
      cancelled = true;
      drawn.current?.destroy();
      drawn.current = undefined;
    };
  }, [data]);

  const findEntity = () => {
    const wanted = find.trim().toLowerCase();
    if (!data || !wanted) return;
    const names = data.nodes.name.map((n) => n.toLowerCase());
    let at = names.indexOf(wanted);
    if (at < 0) at = names.findIndex((n) => n.includes(wanted));
    if (at < 0) setError(new Error(`No entity named like "${find.trim()}" in this graph`));
    else void show(at);
  };

  const count = data?.nodes.id.length ?? 0;
  return (
    <section class="panel search-graph" aria-labelledby="graph-title" data-testid="index-graph">
      <h3 id="graph-title">Graph of "{props.index}"</h3>
      <ErrorLine error={loaded.error ?? error} />
      {data ? (
        <p class="muted">
          {data.entities} entities, {data.relationships} relationships; colour is community, size is
          connections.{data.note ? ` ${data.note}` : ""}
          {data.edges.source.length > DRAWN_EDGES
            ? ` Drawing the ${DRAWN_EDGES} heaviest of the ${data.edges.source.length} relationships sent.`
            : ""}
        </p>
      ) : null}
      {data && count === 0 ? <p class="empty">No entities to draw yet.</p> : null}
      {count > 0 ? (
        <>
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              findEntity();
            }}
          >
            <label class="field graph-find">
              <span>Find an entity</span>
              <input value={find} onInput={(e) => setFind(e.currentTarget.value)} />
            </label>
            <button type="submit" class="btn" disabled={!find.trim()}>
              Show
            </button>
          </form>
          <div class="graph-body">
            <div
              ref={host}
              class="graph-canvas"
              role="img"
              aria-label={`Graph of ${count} entities; find one by name above to read about it`}
              data-testid="graph-canvas"
              data-painted={painted ? "true" : "false"}
              data-complete={complete ? "true" : "false"}
            />
            {entity ? (
              <aside class="graph-entity" aria-labelledby="graph-entity-name" data-testid="graph-entity">
                <h4 id="graph-entity-name">{entity.name}</h4>
                <p class="muted">
                  {entity.type}, {entity.degree} connections, entity {entity.id}
                </p>
                <p>{entity.description}</p>
                <button
                  type="button"
                  class="btn btn-primary"
                  onClick={() => props.onAsk(`What about ${entity.name}?`)}
                >
                  What about {entity.name}?
                </button>
                {entity.sources.length > 0 ? (
                  <>
                    <h5>Sources</h5>
                    <ul class="graph-sources">
                      {entity.sources.map((s) => (
                        <li key={s.id}>
                          <strong>{s.document}</strong> (source {s.id}): {s.text}
                        </li>
                      ))}
                    </ul>
                  </>
                ) : null}
                {entity.related.length > 0 ? (
                  <>
                    <h5>Connected to</h5>
                    <p>{entity.related.map((r) => r.name).join(", ")}</p>
                  </>
                ) : null}
              </aside>
            ) : null}
          </div>
        </>
      ) : null}
    </section>
  );
}
