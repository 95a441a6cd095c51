/**
 * The documents of the chosen index, each with Remove (DELETE …/documents/{name}: its units and what only
 * it supported go, without a rebuild) and Replace (a file picked is uploaded under the same name and read
 * on the server as a build reads it, so only it is re-extracted). The summary of the last change is
 * shown, with its warnings.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { count } from "../../../common/words.ts";
import { api, readSse, request } from "../../lib/api.ts";
import { ErrorLine, useLoad } from "../common.tsx";

interface DocumentInfo {
  name: string;
  chars: number;
  units: number;
}
interface ChangeSummary {
  documents: number;
  entities: number;
  relationships: number;
  warnings: string[];
}

export function IndexDocuments(props: { index: string; onChanged: () => void }): JSX.Element {
  const path = `/search/indexes/${encodeURIComponent(props.index)}/documents`;
  const docs = useLoad<{ documents: DocumentInfo[] }>(path);
  const [busy, setBusy] = useState<string>();
  const [done, setDone] = useState<string>();
  const [error, setError] = useState<unknown>();

  const change = async (name: string, verb: string, run: () => Promise<ChangeSummary>) => {
    setBusy(name);
    setError(undefined);
    setDone(undefined);
    try {
      const s = await run();
      const notes = s.warnings.length > 0 ? ` ${s.warnings.join(" ")}` : "";
      setDone(
        `${verb} ${name}: ${count(s.documents, "document")}, ${count(s.entities, "entity", "entities")}, ${count(s.relationships, "relationship")}.${notes}`,
      );
      await docs.reload();
      props.onChanged();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(undefined);
    }
  };
  const remove = (name: string) =>
    change(name, "Removed", () =>
      api<ChangeSummary>(`${path}/${encodeURIComponent(name)}`, { method: "DELETE" }),
    );
  const replace = (name: string, file: File) =>
    change(name, "Replaced", async () => {
      // A name with folders (given by the `index` command) is sent as text: an upload's name has none.
      if (/[\\/]/.test(name))
        return api<ChangeSummary>("/search/index", {
          method: "POST",
          body: { name: props.index, documents: [{ name, text: await file.text() }] },
        });
      // Otherwise the file goes as it is, read on the server as a build reads it (PDF, HTML, Latin-1).
      const form = new FormData();
      form.set("name", props.index);
      form.append("files", file, name);
      const response = await request("/search/index/upload", {
        method: "POST",
        body: form,
        headers: { accept: "text/event-stream" },
      });
      for await (const frame of readSse(response)) {
        if (frame.event === "error") throw new Error(JSON.parse(frame.data).detail);
        if (frame.event === "done") return JSON.parse(frame.data) as ChangeSummary;
      }
      throw new Error("The server ended the upload without a summary.");
    });

  const list = docs.data?.documents ?? [];
  return (
    <section class="panel" aria-labelledby="docs-title" data-testid="index-documents">
      <h3 id="docs-title">Documents in "{props.index}"</h3>
      <ErrorLine error={docs.error ?? error} />
      {list.length === 0 && docs.data ? <p class="empty">No documents.</p> : null}
      {list.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a wide table scrolls, so keyboard users must reach it
        <section class="table-wrap" tabIndex={0} aria-label={`Documents in ${props.index}`}>
          <table class="context-table">
            <thead>
              <tr>
                <th scope="col">Document</th>
                <th scope="col">Characters</th>
                <th scope="col">Units</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {list.map((d) => (
                <tr key={d.name}>
                  <td>{d.name}</td>
                  <td>{d.chars}</td>
                  <td>{d.units}</td>
                  <td>
                    <div class="row">
                      <button
                        type="button"
                        class="btn"
                        aria-label={`Remove ${d.name}`}
                        disabled={busy !== undefined}
                        onClick={() => void remove(d.name)}
                      >
                        Remove
                      </button>
                      <label class="btn">
                        Replace<span class="sr-only"> {d.name}</span>
                        <input
                          type="file"
                          class="sr-only"
                          accept=".txt,.text,.md,.markdown,.html,.htm,.xhtml,.pdf"
                          disabled={busy !== undefined}
                          onChange={(e) => {
                            const file = e.currentTarget.files?.[0];
                            e.currentTarget.value = "";
                            if (file) void replace(d.name, file);
                          }}
                        />
                      </label>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {done ? (
        <p class="notice" role="status" data-testid="documents-status">
          {done}
        </p>
      ) : null}
    </section>
  );
}
