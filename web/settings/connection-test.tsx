/**
 * "Test connection": asks the server to make one cheap request to a provider
 * (`POST /api/chat/providers/{id}/test`) with the typed key, or the stored one, and shows what happened
 * in words: connected (where, how many models), or the provider's own error (unreachable URL, key refused).
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { api } from "../lib/api.ts";

type Result = { ok: true; detail: string } | { ok: false; error: string };

export function ConnectionTest({
  provider,
  name,
  typedKey,
}: {
  provider: string;
  name: string;
  /** What the person typed but has not saved: tested instead of the stored key. */
  typedKey?: string;
}): JSX.Element {
  const [result, setResult] = useState<Result | undefined>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setResult(undefined);
    try {
      const key = typedKey?.trim();
      setResult(
        await api<Result>(`/api/chat/providers/${provider}/test`, {
          method: "POST",
          body: key ? { apiKey: key } : {},
        }),
      );
    } catch (e) {
      setResult({ ok: false, error: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="connection-test">
      <button
        type="button"
        class="btn btn-small"
        disabled={busy}
        aria-label={`Test connection to ${name}`}
        onClick={() => void run()}
      >
        {busy ? "Testing…" : "Test connection"}
      </button>
      <p class={result && !result.ok ? "error test-result" : "test-result"} role="status" aria-live="polite">
        {result ? (result.ok ? result.detail : result.error) : ""}
      </p>
    </div>
  );
}
