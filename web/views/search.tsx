/**
 * The Search view (#/search): pick one of the caller's indexes (or build one from files), ask a local
 * (entities and their sources) or global (community reports) question, and read the answer as it
 * streams, with the context tables it answered from beside it.
 */
import type { JSX } from "preact";
import { useRef, useState } from "preact/hooks";
import { readSse, request } from "../lib/api.ts";
import { ErrorLine, useLoad } from "./common.tsx";
import { renderAnswer } from "./search/answer-text.ts";
import { BuildIndex } from "./search/build-index.tsx";
import { ContextTables } from "./search/context-tables.tsx";
import { IndexDocuments } from "./search/documents.tsx";
import { IndexGraph } from "./search/graph.tsx";
import "./views.css";
import { count } from "../../common/words.ts";

interface IndexInfo {
  name: string;
  documents: number;
  units: number;
  updated_at: string;
}
type SearchMode = "local" | "global";

export default function SearchView(): JSX.Element {
  const indexes = useLoad<{ indexes: IndexInfo[] }>("/search/indexes");
  const [chosen, setChosen] = useState<string>();
  const [mode, setMode] = useState<SearchMode>("local");
  const [query, setQuery] = useState("");
  const [answer, setAnswer] = useState("");
  const [context, setContext] = useState<Record<string, Record<string, unknown>[]>>();
  const [asking, setAsking] = useState(false);
  const [cited, setCited] = useState<{ table: string; id: string }>();
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController | undefined>(undefined);

  const list = indexes.data?.indexes ?? [];
  const index = chosen ?? list[0]?.name;
  const version = list.find((i) => i.name === index)?.updated_at;

  const ask = async (question = query, kind: SearchMode = mode) => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setAsking(true);
    setAnswer("");
    setContext(undefined);
    setCited(undefined);
    setError(undefined);
    try {
      const response = await request(`/search/${kind}/stream`, {
        method: "POST",
        body: { query: question, ...(index ? { index } : {}) },
        headers: { accept: "text/event-stream" },
        signal: controller.signal,
      });
      let text = "";
      for await (const frame of readSse(response)) {
        const data = JSON.parse(frame.data);
        if (frame.event === "context") setContext(data);
        else if (frame.event === "delta") {
          text += data.text;
          setAnswer(text);
        } else if (frame.event === "done") setAnswer(data.response);
        else if (frame.event === "error") throw new Error(data.detail);
      }
    } catch (e) {
      if (!controller.signal.aborted) setError(e);
    } finally {
      if (abort.current === controller) setAsking(false);
    }
  };

  return (
    <div class="view-pad search-view">
      <h2 class="view-title">Search</h2>
      <div class="search-top">
        <section class="panel" aria-labelledby="ask-title">
          <h3 id="ask-title">Ask</h3>
          <ErrorLine error={indexes.error} />
          {indexes.data && list.length === 0 ? (
            <p class="empty">No index yet: build one from a few text files (panel below).</p>
          ) : null}
          <form
            class="stack"
            onSubmit={(e) => {
              e.preventDefault();
              if (query.trim()) void ask();
            }}
            onKeyDown={(e) => {
              if (e.key === "Escape" && asking) abort.current?.abort();
            }}
          >
            <div class="field">
              <label for="search-index">Index</label>
              <select
                id="search-index"
                value={index ?? ""}
                onChange={(e) => setChosen(e.currentTarget.value)}
              >
                {list.map((i) => (
                  <option key={i.name} value={i.name}>
                    {i.name} ({count(i.documents, "document")})
                  </option>
                ))}
              </select>
            </div>
            <fieldset class="row">
              <legend>Search type</legend>
              <label>
                <input
                  type="radio"
                  name="mode"
                  checked={mode === "local"}
                  onChange={() => setMode("local")}
                />{" "}
                Local (entities and their sources)
              </label>
              <label>
                <input
                  type="radio"
                  name="mode"
                  checked={mode === "global"}
                  onChange={() => setMode("global")}
                />{" "}
                Global (themes across community reports)
              </label>
            </fieldset>
            <label class="field">
              <span>Question</span>
              <input
                value={query}
                maxLength={8000}
                placeholder="Who is Scrooge?"
                onInput={(e) => setQuery(e.currentTarget.value)}
              />
            </label>
            <div class="row">
              <button type="submit" class="btn btn-primary" disabled={asking || !query.trim()}>
                {asking ? "Searching…" : "Ask"}
              </button>
              {asking ? (
                <button type="button" class="btn" onClick={() => abort.current?.abort()}>
                  Stop
                </button>
              ) : null}
            </div>
          </form>
        </section>
        <BuildIndex
          onBuilt={(name) => {
            setChosen(name);
            void indexes.reload();
          }}
        />
      </div>
      {index ? <IndexDocuments key={index} index={index} onChanged={() => void indexes.reload()} /> : null}
      {index ? (
        // A changed index (a document added or removed) is drawn again from its new graph.
        <IndexGraph
          key={`${index}@${version}`}
          index={index}
          onAsk={(question) => {
            setQuery(question);
            setMode("local");
            void ask(question, "local");
          }}
        />
      ) : null}
      <ErrorLine error={error} />
      {answer || context ? (
        <div class="search-result">
          <section class="panel" aria-labelledby="answer-title" aria-busy={asking}>
            <h3 id="answer-title">Answer</h3>
            {/* The HTML is DOMPurify's output (renderAnswer); a citation link highlights its context row. */}
            {/* biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/noStaticElementInteractions: the links inside are the controls; Enter on a link clicks it */}
            <div
              class="markdown search-answer"
              aria-live="polite"
              data-testid="search-answer"
              onClick={(e) => {
                const link = (e.target as HTMLElement).closest("a.cite") as HTMLAnchorElement | null;
                if (!link) return;
                e.preventDefault();
                setCited({ table: link.dataset.table ?? "", id: link.dataset.id ?? "" });
              }}
              dangerouslySetInnerHTML={{ __html: renderAnswer(answer) }}
            />
          </section>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
          <section class="panel search-context" aria-labelledby="context-title" tabIndex={0}>
            <h3 id="context-title">Context</h3>
            {context ? (
              <ContextTables data={context} cited={cited} />
            ) : (
              <p class="muted">Waiting for context…</p>
            )}
          </section>
        </div>
      ) : null}
    </div>
  );
}
