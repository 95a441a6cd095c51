/**
 * Provider keys: configured or not, set or clear a key, test the connection (the typed key before it is
 * saved, else the stored one). The key field is write-only: never filled from the server. A provider
 * configured by an address (its variable is `*_URL`: Ollama) asks for a base URL, in plain text, not
 * for an API key it does not have.
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api } from "../lib/api.ts";
import { ConnectionTest } from "./connection-test.tsx";

interface Provider {
  id: string;
  name: string;
  envVarName: string;
  configured?: boolean;
  isConfigured?: boolean;
}

const configured = (p: Provider) => Boolean(p.isConfigured ?? p.configured);
/** A provider reached at an address rather than with a key (Ollama: `OLLAMA_BASE_URL`). */
const takesUrl = (p: Provider) => p.envVarName.endsWith("_URL");

function ProviderRow({ provider, onChange }: { provider: Provider; onChange(): Promise<void> }): JSX.Element {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>();
  const id = `key-${provider.id}`;
  const url = takesUrl(provider);
  const store = async (apiKey: string) => {
    setError(undefined);
    setStatus(undefined);
    try {
      await api("/api/chat/providers", { method: "POST", body: { provider: provider.id, apiKey } });
      setKey("");
      const what = url ? "URL" : "Key";
      setStatus(apiKey ? `${what} saved.` : `${what} cleared.`);
      await onChange();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <li class="provider" data-provider={provider.id}>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) void store(key.trim());
        }}
      >
        <strong>{provider.name}</strong>
        <span class={configured(provider) ? "badge badge-ok" : "badge"}>
          {configured(provider) ? "configured" : "not set"}
        </span>
        <label class="sr-only" for={id}>
          {provider.name} {url ? "base URL" : "API key"}
        </label>
        {url ? (
          <input
            id={id}
            type="url"
            autocomplete="off"
            placeholder={`Base URL (${provider.envVarName})`}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        ) : (
          <input
            id={id}
            type="password"
            autocomplete="off"
            placeholder={provider.envVarName}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        )}
        <button type="submit" class="btn btn-small" disabled={!key.trim()}>
          {url ? "Save URL" : "Save key"}
        </button>
        {configured(provider) && (
          <button type="button" class="btn btn-small btn-danger" onClick={() => void store("")}>
            Clear
          </button>
        )}
      </form>
      <ConnectionTest provider={provider.id} name={provider.name} typedKey={key} />
      {status && <small role="status">{status}</small>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

export function ProvidersPanel(): JSX.Element {
  const [providers, setProviders] = useState<Provider[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = () =>
    api<{ providers: Provider[] }>("/api/chat/providers")
      .then((r) => setProviders(r.providers))
      .catch((e: Error) => setError(e.message));
  useEffect(() => void load(), []);
  return (
    <section class="panel" id="providers" aria-labelledby="providers-title">
      <h2 id="providers-title">Providers</h2>
      <p class="muted">
        Keys are stored on this server and used by your chats at once. A key is never shown again; an
        environment variable, when set, wins over a stored key.
      </p>
      {error && <p class="error">{error}</p>}
      <ul class="list">
        {providers?.map((p) => (
          <ProviderRow key={p.id} provider={p} onChange={load} />
        ))}
      </ul>
    </section>
  );
}
