/**
 * The turn composer: the message (Enter sends, Shift+Enter is a newline), attachments added by
 * dropping or picking files (each uploaded at once with a multipart POST /api/attachments, so a send
 * only names their ids), and the Send button.
 */

import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Attachment } from "../../../schemas/turns.ts";
import { api } from "../../lib/api.ts";
import { DropZone, ErrorLine, formatBytes } from "../common.tsx";

export function Composer(props: {
  busy: boolean;
  onSend: (text: string, attachmentIds: string[]) => void;
}): JSX.Element {
  const [text, setText] = useState("");
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [uploading, setUploading] = useState(0);
  const [error, setError] = useState<unknown>();

  const upload = async (files: File[]) => {
    setError(undefined);
    setUploading((n) => n + files.length);
    for (const file of files) {
      const form = new FormData();
      form.append("file", file, file.name);
      try {
        const added = await api<Attachment>("/api/attachments", { method: "POST", body: form });
        setAttachments((list) => [...list, added]);
      } catch (e) {
        setError(e);
      } finally {
        setUploading((n) => n - 1);
      }
    }
  };

  const canSend = !props.busy && uploading === 0 && text.trim() !== "";
  const send = () => {
    if (!canSend) return;
    props.onSend(
      text,
      attachments.map((a) => a.id),
    );
    setText("");
    setAttachments([]);
  };

  return (
    <form
      class="composer turn-composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <label class="sr-only" for="turn-text">
        Message (Enter sends, Shift+Enter for a new line)
      </label>
      <textarea
        id="turn-text"
        rows={4}
        value={text}
        placeholder={"Ask, or paste Python in a fenced block:\n```python\nprint(6 * 7)\n```"}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      <DropZone
        label="Attach files"
        onFiles={(files) => void upload(files)}
        testId="turn-drop"
        target="to this turn as attachments"
      >
        {attachments.length > 0 ? (
          <ul class="chips" aria-label="Attachments">
            {attachments.map((a) => (
              <li key={a.id} class="chip">
                {a.filename} <span class="muted">{formatBytes(a.byteSize)}</span>
                <button
                  type="button"
                  class="btn btn-small"
                  aria-label={`Remove ${a.filename}`}
                  onClick={() => setAttachments((list) => list.filter((x) => x.id !== a.id))}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        {uploading > 0 ? <span class="muted"> uploading {uploading}…</span> : null}
      </DropZone>
      <ErrorLine error={error} />
      <div class="row">
        <button type="submit" class="btn btn-primary" disabled={!canSend}>
          Send
        </button>
      </div>
    </form>
  );
}
