/**
 * First run: no model is configured (only the built-in offline model answers). Offers the providers
 * panel and the models a local Ollama serves (`/api/chat/models/discover?provider=ollama`). Looking for
 * them is the card's one test of Ollama, so an unreachable Ollama is said once, in the provider's words
 * (the card had a connection test beside it, and a new user got the same failure twice).
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { discover, type PickerModel } from "./models.ts";

export function SetupCard({ onPick }: { onPick(model: PickerModel): Promise<void> }): JSX.Element {
  const [found, setFound] = useState<PickerModel[] | undefined>();
  const [words, setWords] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const look = async () => {
    setBusy(true);
    setWords([]);
    try {
      const result = await discover("ollama");
      setFound(result.models);
      setWords(result.diagnostics);
    } catch (e) {
      setWords([(e as Error).message]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel msg setup" aria-label="Set up a model">
      <h2>Set up a model</h2>
      <p>
        No model is configured yet, so the built-in offline model answers. Add a provider key in{" "}
        <a href="#/settings">Settings → Providers</a>, or use a model from a local Ollama.
      </p>
      <div class="row">
        <a class="btn btn-primary" href="#/settings">
          Open providers
        </a>
        <button type="button" class="btn" disabled={busy} onClick={() => void look()}>
          {busy ? "Looking…" : "Find local Ollama models"}
        </button>
      </div>
      <div role="status" aria-live="polite">
        {words.map((w) => (
          <p key={w} class="error">
            {w}
          </p>
        ))}
      </div>
      {found && found.length === 0 && words.length === 0 && (
        <p class="muted">Ollama answered but serves no model.</p>
      )}
      {found && found.length > 0 && (
        <ul class="list discovered">
          {found.map((m) => (
            <li key={m.key} class="row">
              <span>{m.name}</span>
              <button type="button" class="btn btn-small" onClick={() => void onPick(m)}>
                Use {m.id}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
