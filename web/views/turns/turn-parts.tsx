/**
 * Draws a turn's display parts: the step's Python and what it printed, reasoning (collapsible), tool
 * calls with their results, artifacts as download links, bound attachments, warnings and the answer.
 * Text is shown as text (never as HTML): model output cannot inject markup here.
 */
import type { JSX } from "preact";
import { formatBytes } from "../common.tsx";
import type { DisplayPart } from "./parts.ts";

const json = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

function Part({ part }: { part: DisplayPart }): JSX.Element {
  switch (part.kind) {
    case "code":
      return (
        <figure class="turn-code">
          <figcaption class="muted">Step {part.step} · Python</figcaption>
          <pre>
            <code>{part.code}</code>
          </pre>
        </figure>
      );
    case "output":
      return (
        <figure class="turn-output" data-testid="turn-output">
          <figcaption class="muted">Output</figcaption>
          <pre>{part.output || "(no output)"}</pre>
        </figure>
      );
    case "reasoning":
      return (
        <details class="turn-reasoning">
          <summary>Reasoning</summary>
          <p class="pre-wrap">{part.text}</p>
        </details>
      );
    case "text":
      return (
        <div class="turn-answer pre-wrap" data-testid="turn-answer">
          {part.text}
        </div>
      );
    case "tool":
      return (
        <details class="tool" data-state={part.error ? "output-error" : "output-available"}>
          <summary>
            Tool <code>{part.name}</code>
            {part.error ? " failed" : ""}
          </summary>
          <pre>{json(part.input)}</pre>
          {part.error ? <p class="error">{part.error}</p> : <pre>{json(part.output)}</pre>}
        </details>
      );
    case "artifact":
      return (
        <p class="turn-artifact">
          Artifact:{" "}
          <a href={`/api/artifacts/${encodeURIComponent(part.id)}/content`} download={part.title}>
            {part.title}
          </a>{" "}
          <span class="muted">
            ({part.mediaType}, {formatBytes(part.byteSize)})
          </span>
        </p>
      );
    case "attachment":
      return (
        <p class="muted">
          Attached {part.filename} ({formatBytes(part.byteSize)})
        </p>
      );
    case "warning":
      return <p class="notice">{part.message}</p>;
    case "result":
      return (
        <figure>
          <figcaption class="muted">Result</figcaption>
          <pre>{json(part.value)}</pre>
        </figure>
      );
  }
}

export function TurnParts({ parts }: { parts: DisplayPart[] }): JSX.Element {
  return (
    <div class="turn-parts">
      {parts.map((p) => (
        <Part key={p.key} part={p} />
      ))}
    </div>
  );
}
