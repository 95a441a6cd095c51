/**
 * Builds a search index from dropped (or picked) files: PDF, HTML, Markdown and text files are uploaded
 * as they are to `POST /search/index/upload` (multipart), read on the server by the `index` command's
 * readers, and its progress events drive a progress bar per phase; the summary is shown when it ends.
 * Files of other types are not sent and are named as skipped with the reason; files the server could
 * not read (a PDF without text) are named from the summary's `skipped`.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { count } from "../../../common/words.ts";
import { readSse, request } from "../../lib/api.ts";
import { DropZone, ErrorLine } from "../common.tsx";

const PHASES = ["units", "extraction", "communities", "reports"] as const;
const PHASE_LABEL: Record<string, string> = {
  units: "Splitting documents",
  extraction: "Extracting entities",
  communities: "Finding communities",
  reports: "Writing reports",
};
/** The types the server's readers take (server/search/indexing/file-text.ts). */
const READABLE = /\.(pdf|txt|text|md|markdown|html?|xhtml)$/i;
const extension = (name: string) => name.match(/\.[^.]+$/)?.[0]?.toLowerCase() ?? "";

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
  skipped: { path: string; reason: string }[];
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
    const readable = dropped.filter((f) => READABLE.test(f.name));
    setSkipped(
      dropped
        .filter((f) => !readable.includes(f))
        .map((f) => `${f.name} (unsupported file type (${extension(f.name) || "no extension"}))`),
    );
    setFiles((list) => [...list.filter((f) => !readable.some((r) => r.name === f.name)), ...readable]);
  };

  const build = async () => {
    setBuilding(true);
    setError(undefined);
    setSummary(undefined);
    setProgress(undefined);
    try {
      const form = new FormData();
      form.set("name", name);
      for (const file of files) form.append("files", file, file.name);
      const response = await request("/search/index/upload", {
        method: "POST",
        body: form,
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

  // Warnings beyond the skipped files (named above): an index too small to make a graph says so.
  const notes = (summary?.warnings ?? []).filter(
    (w) => !summary?.skipped.some((f) => w.startsWith(`${f.path}:`)),
  );
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
      <DropZone
        label="Choose files"
        onFiles={add}
        disabled={building}
        testId="index-drop"
        accept=".pdf,.txt,.text,.md,.markdown,.html,.htm,.xhtml"
        target="to the index build"
      >
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
      <p class="muted">PDF, HTML, Markdown and text files.</p>
      {skipped.length > 0 ? <p class="muted">Skipped: {skipped.join(", ")}</p> : null}
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
              : `Build "${name}" from ${count(files.length, "file")}`}
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
          Built "{summary.index}": {count(summary.documents, "document")},{" "}
          {count(summary.entities, "entity", "entities")}, {count(summary.relationships, "relationship")},{" "}
          {count(summary.communities, "community", "communities")}, {count(summary.reports, "report")} in{" "}
          {summary.seconds.toFixed(1)} s.
          {summary.skipped.length > 0
            ? ` Not indexed: ${summary.skipped.map((f) => `${f.path} (${f.reason})`).join("; ")}.`
            : ""}
        </p>
      ) : null}
      {notes.length > 0 ? (
        <ul class="notice build-warnings" role="status" data-testid="build-warnings">
          {notes.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
      <ErrorLine error={error} />
    </section>
  );
}
