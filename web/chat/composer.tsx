/**
 * The message box: Enter sends, Shift+Enter is a newline, Esc aborts the running turn. Files dropped on
 * it (or picked) are written to the workspace through the Files API (`files/uploads/<name>`) and named
 * in the message, so the agent's tools can read them.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { api } from "../lib/api.ts";
import { DropStatus, useFileDrop } from "../lib/file-drop.tsx";

interface Props {
  streaming: boolean;
  onSend(text: string): void;
  onAbort(): void;
}

const MAX_FILE = 1024 * 1024;

async function upload(file: File): Promise<string> {
  if (file.size > MAX_FILE) throw new Error(`${file.name} is over 1 MiB`);
  const content = await file.text();
  if (content.includes("\u0000")) throw new Error(`${file.name} is not a text file`);
  const name = file.name.replace(/[^\w.-]+/g, "_").replace(/^\.+/, "") || "file";
  const path = `uploads/${name}`;
  await api("/api/files/content", { method: "PUT", body: { path, content, overwrite: true } });
  return `files/${path}`;
}

export function Composer({ streaming, onSend, onAbort }: Props): JSX.Element {
  const [text, setText] = useState("");
  const [files, setFiles] = useState<string[]>([]);
  const [error, setError] = useState<string | undefined>();

  const submit = () => {
    const body = text.trim();
    if (!body && files.length === 0) return;
    const attached = files.length > 0 ? `\n\nAttached files (in the workspace): ${files.join(", ")}` : "";
    onSend(`${body}${attached}`.trim());
    setText("");
    setFiles([]);
  };

  const addFiles = async (list: FileList | File[] | null | undefined) => {
    setError(undefined);
    for (const file of Array.from(list ?? [])) {
      try {
        const path = await upload(file);
        setFiles((f) => (f.includes(path) ? f : [...f, path]));
        drop.announce(`Attached ${path}`);
      } catch (e) {
        setError((e as Error).message);
      }
    }
  };
  const drop = useFileDrop((files) => void addFiles(files), "to the message");

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === "Escape" && streaming) {
      e.preventDefault();
      onAbort();
    }
  };

  return (
    <div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {files.length > 0 && (
        <p class="queue" aria-live="polite">
          Attached: {files.join(", ")}
        </p>
      )}
      <form
        class="composer"
        data-drag={drop.over ? "true" : undefined}
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
        {...drop.handlers}
      >
        {drop.over && (
          <span class="drop-hint" aria-hidden="true">
            Release to attach the files
          </span>
        )}
        <DropStatus drop={drop} />
        <label class="sr-only" for="composer-input">
          Message
        </label>
        <textarea
          id="composer-input"
          rows={2}
          placeholder={
            streaming
              ? "Queue a follow-up… (Esc stops the reply)"
              : "Message (Enter sends, Shift+Enter for a new line)"
          }
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={onKeyDown}
        />
        <label class="btn" title="Attach files">
          Attach
          <input
            type="file"
            multiple
            class="sr-only"
            onChange={(e) => void addFiles((e.target as HTMLInputElement).files)}
          />
        </label>
        {streaming && (
          <button type="button" class="btn btn-danger" onClick={onAbort}>
            Stop
          </button>
        )}
        <button type="submit" class="btn btn-primary">
          Send
        </button>
      </form>
    </div>
  );
}
