/**
 * Builds a search index from dropped (or picked) files: text files are read in the browser and sent
 * to `POST /search/index/stream`, whose progress events drive a progress bar per phase; the summary
 * is shown when it ends. Files that are not text are skipped and named.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { readSse, request } from "../../lib/api.ts";
import { DropZone, ErrorLine } from "../common.tsx";

const PHASES = ["units", "extraction", "communities", "reports"] as const;
const PHASE_LABEL: Record<string, string> = {
  units: "Splitting documents",
  extraction: "Extracting entities",
  communities: "Finding communities",
  reports: "Writing reports",
};
const TEXT_NAME = /\.(txt|md|markdown|html?|csv|json|rst|org|log)$/i;

interface Progress {
  phase: string;
  done: number;
  total: number;
}
interface Summary {
  index: string;
  documents: number;
  entities: number;
  relationships: number;
  communities: number;
  reports: number;
  seconds: number;
  warnings: string[];
}

export function BuildIndex({ onBuilt }: { onBuilt: (name: string) => void }): JSX.Element {
  const [name, setName] = useState("default");
  const [files, setFiles] = useState<File[]>([]);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [progress, setProgress] = useState<Progress>();
  const [summary, setSummary] = useState<Summary>();
  const [error, setError] = useState<unknown>();
  const [building, setBuilding] = useState(false);

  const add = (dropped: File[]) => {
    const text = dropped.filter((f) => TEXT_NAME.test(f.name) || f.type.startsWith("text/"));
    setSkipped(dropped.filter((f) => !text.includes(f)).map((f) => f.name));
    setFiles((list) => [...list.filter((f) => !text.some((t) => t.name === f.name)), ...text]);
  };

  const build = async () => {
    setBuilding(true);
    setError(undefined);
    setSummary(undefined);
    setProgress(undefined);
    try {
      const documents = await Promise.all(files.map(async (f) => ({ name: f.name, text: await f.text() })));
      const response = await request("/search/index/stream", {
        method: "POST",
        body: { name, documents },
        headers: { accept: "text/event-stream" },
      });
      for await (const frame of readSse(response)) {
        const data = JSON.parse(frame.data);
        if (frame.event === "progress") setProgress(data);
        else if (frame.event === "error") throw new Error(data.detail);
        else if (frame.event === "done") {
          setSummary(data);
          setFiles([]);
          onBuilt(data.index);
        }
      }
    } catch (e) {
      setError(e);
    } finally {
      setBuilding(false);
    }
  };

  const step = progress ? PHASES.indexOf(progress.phase as (typeof PHASES)[number]) + 1 : 0;
  return (
    <section class="panel" aria-labelledby="build-title">
      <h3 id="build-title">Build an index</h3>
      <label class="field">
        <span>Index name</span>
        <input
          value={name}
          pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}"
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <DropZone label="Choose text files" onFiles={add} disabled={building} testId="index-drop">
        {files.length > 0 ? (
          <ul class="chips" aria-label="Files to index">
            {files.map((f) => (
              <li key={f.name} class="chip">
                {f.name}
              </li>
            ))}
          </ul>
        ) : null}
      </DropZone>
      {skipped.length > 0 ? <p class="muted">Skipped (not text): {skipped.join(", ")}</p> : null}
      <div class="row">
        <button
          type="button"
          class="btn btn-primary"
          disabled={building || files.length === 0 || name === ""}
          onClick={() => void build()}
        >
          {building
            ? "Building…"
            : files.length === 0
              ? "Build (add files first)"
              : `Build "${name}" from ${files.length} file${files.length === 1 ? "" : "s"}`}
        </button>
      </div>
      {progress && building ? (
        <div class="build-progress" aria-live="polite">
          <label for="build-bar">
            {PHASE_LABEL[progress.phase] ?? progress.phase} ({step}/{PHASES.length}): {progress.done}/
            {progress.total}
          </label>
          <progress id="build-bar" max={progress.total || 1} value={progress.done} />
        </div>
      ) : null}
      {summary ? (
        <p class="notice" role="status" data-testid="build-summary">
          Built "{summary.index}": {summary.documents} documents, {summary.entities} entities,{" "}
          {summary.relationships} relationships, {summary.communities} communities, {summary.reports} reports
          in {summary.seconds.toFixed(1)} s.
          {summary.warnings.length > 0 ? ` Warnings: ${summary.warnings.join("; ")}` : ""}
        </p>
      ) : null}
      <ErrorLine error={error} />
    </section>
  );
}
