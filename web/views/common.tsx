/**
 * Small pieces the turns, search and agents views share: a file drop zone that is also a keyboard
 * button, an error line, byte sizes, and a hook that loads a JSON route and can reload it.
 */
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../lib/api.ts";
import { DropStatus, useFileDrop } from "../lib/file-drop.tsx";

/** "1.2 KB" style sizes for file and artifact lists. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * What went wrong, in words: the agents and search families answer FastAPI-style `{detail}` (a string,
 * or a list of `{loc, msg}` for validation), which the shared API helper leaves as raw JSON.
 */
export function errorText(error: unknown): string {
  const body = error instanceof ApiError ? (error.body as { detail?: unknown } | undefined) : undefined;
  const detail = body && typeof body === "object" ? body.detail : undefined;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => {
        const field = (d.loc ?? []).filter((part) => part !== "body").join(".");
        return field ? `${field}: ${d.msg}` : String(d.msg);
      })
      .join("; ");
  }
  return error instanceof Error ? error.message : String(error);
}

/** An error in place, announced to screen readers. */
export function ErrorLine({ error }: { error: unknown }): JSX.Element | null {
  if (error === undefined || error === null || error === "") return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  reload: () => Promise<void>;
}

/** GETs `path` (skipped while it is null) and keeps the answer; `reload` fetches it again. */
export function useLoad<T>(path: string | null): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const current = useRef(path);
  current.current = path;
  const reload = useCallback(async () => {
    if (path === null) return;
    try {
      const body = await api<T>(path);
      if (current.current === path) {
        setData(body);
        setError(undefined);
      }
    } catch (e) {
      if (current.current === path) setError(e);
    }
  }, [path]);
  useEffect(() => {
    setData(undefined);
    void reload();
  }, [reload]);
  return { data, error, reload };
}

/**
 * Files dropped on the zone, or picked with its button (the keyboard way in). `label` names what the
 * files are for; `accept` narrows the picker.
 */
export function DropZone(props: {
  label: string;
  onFiles: (files: File[]) => void;
  accept?: string;
  disabled?: boolean;
  children?: ComponentChildren;
  testId?: string;
  /** Where the files go, for what a screen reader hears ("to the index build"). */
  target?: string;
}): JSX.Element {
  const drop = useFileDrop(props.onFiles, props.target ?? "", props.disabled);
  const input = useRef<HTMLInputElement>(null);
  const take = (list: FileList | null | undefined) => {
    const files = list ? Array.from(list) : [];
    if (files.length > 0 && !props.disabled) props.onFiles(files);
  };
  return (
    <fieldset
      class={`dropzone${drop.over ? " dropzone-over" : ""}`}
      data-testid={props.testId}
      data-drag={drop.over ? "true" : undefined}
      {...drop.handlers}
    >
      <legend class="sr-only">{props.label}</legend>
      <span class="muted">{drop.over ? "Release to add the files" : "Drop files here or"}</span>{" "}
      <button
        type="button"
        class="btn btn-small"
        disabled={props.disabled}
        onClick={() => input.current?.click()}
      >
        {props.label}
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        accept={props.accept}
        aria-label={props.label}
        onChange={(e) => {
          take((e.currentTarget as HTMLInputElement).files);
          (e.currentTarget as HTMLInputElement).value = "";
        }}
      />
      <DropStatus drop={drop} />
      {props.children}
    </fieldset>
  );
}

/** A random id for Idempotency-Key headers and list keys. */
export function randomKey(): string {
  return crypto.randomUUID();
}
