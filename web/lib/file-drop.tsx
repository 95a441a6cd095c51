/**
 * Dropping files on an element: the drag handlers, whether files are over it (for a visible state), and
 * what a screen reader is told (`DropStatus`, a polite live region: "Release to add …" while dragging,
 * then what the drop did). Only drags that carry files count; dragenter/dragleave are counted, so moving
 * over the element's own children does not flicker the state.
 */
import type { JSX } from "preact";
import { useRef, useState } from "preact/hooks";

export interface FileDrop {
  over: boolean;
  /** What the live region says now. */
  message: string;
  /** Sets what the live region says (after a drop: what was added or refused). */
  announce(message: string): void;
  handlers: {
    onDragEnter(e: DragEvent): void;
    onDragOver(e: DragEvent): void;
    onDragLeave(e: DragEvent): void;
    onDrop(e: DragEvent): void;
  };
}

const carriesFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");

export function useFileDrop(onFiles: (files: File[]) => void, what: string, disabled = false): FileDrop {
  const [over, setOver] = useState(false);
  const [message, announce] = useState("");
  const depth = useRef(0);
  const enter = (e: DragEvent) => {
    if (!carriesFiles(e) || disabled) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
    if (!over) {
      setOver(true);
      announce(`Release to add the files ${what}`);
    }
  };
  return {
    over,
    message,
    announce,
    handlers: {
      onDragEnter(e) {
        depth.current++;
        enter(e);
      },
      onDragOver: enter,
      onDragLeave() {
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0 && over) {
          setOver(false);
          announce("");
        }
      },
      onDrop(e) {
        depth.current = 0;
        setOver(false);
        if (!carriesFiles(e)) return;
        e.preventDefault();
        if (disabled) return;
        const files = Array.from(e.dataTransfer?.files ?? []);
        announce(files.length ? `Dropped ${files.map((f) => f.name).join(", ")}` : "");
        if (files.length) onFiles(files);
      },
    },
  };
}

/** The live region a drop target announces through (visually hidden: the target shows its own state). */
export function DropStatus({ drop }: { drop: FileDrop }): JSX.Element {
  return (
    <span class="sr-only" role="status" aria-live="polite">
      {drop.message}
    </span>
  );
}
