/**
 * The workspace files a turn's Python reads and writes (`write_file`, `list_files`): the whole tree
 * from the Files API, refreshed after each turn, and the first page of a file shown on demand.
 */

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { FileList } from "../../../schemas/turns.ts";
import { api } from "../../lib/api.ts";
import { ErrorLine, formatBytes, useLoad } from "../common.tsx";

export function FilesPanel({ refresh }: { refresh: number }): JSX.Element {
  const files = useLoad<FileList>("/api/files");
  const [open, setOpen] = useState<{ path: string; content: string; more: boolean }>();
  const [error, setError] = useState<unknown>();
  // Reload when a turn ends (`refresh` counts finished turns; the first load is useLoad's own).
  useEffect(() => {
    if (refresh > 0) void files.reload();
  }, [refresh]);

  const show = async (path: string) => {
    try {
      const page = await api<{ content: string; nextOffset: number | null }>(
        `/api/files/content?path=${encodeURIComponent(path)}`,
      );
      setOpen({ path, content: page.content, more: page.nextOffset !== null });
      setError(undefined);
    } catch (e) {
      setError(e);
    }
  };

  const items = files.data?.items.filter((f) => f.type === "file") ?? [];
  return (
    <section class="panel files-panel" aria-labelledby="files-title">
      <h3 id="files-title">Workspace files</h3>
      <ErrorLine error={files.error ?? error} />
      {files.data && items.length === 0 ? (
        <p class="empty">No files yet. A turn's Python can write some with write_file("notes.txt", "…").</p>
      ) : null}
      <ul class="list">
        {items.map((f) => (
          <li key={f.path} class="row">
            <button type="button" class="linklike" onClick={() => void show(f.path)}>
              {f.path}
            </button>
            <span class="muted">{formatBytes(f.size)}</span>
          </li>
        ))}
      </ul>
      {files.data?.truncated ? <p class="muted">Only the first files are listed.</p> : null}
      {open ? (
        <figure>
          <figcaption class="muted">
            {open.path}
            {open.more ? " (first page)" : ""}
          </figcaption>
          <pre>{open.content}</pre>
        </figure>
      ) : null}
    </section>
  );
}
