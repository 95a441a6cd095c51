/**
 * Provider keys: configured or not, set or clear a key, test the connection (the typed key before it is
 * saved, else the stored one). The key field is write-only: never filled from the server. A provider
 * configured by an address (its variable is `*_URL`: Ollama) asks for a base URL, in plain text, not
 * for an API key it does not have. A provider that needs several fields (Amazon Bedrock: access key id,
 * secret access key, region) says so in `fields`: one labelled input each, secrets as password fields,
 * sent together as `credentials`; the server answers only which are set.
 */
import type { JSX, TargetedEvent } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { ProviderInfo } from "../../schemas/chat-records.ts";
import { api } from "../lib/api.ts";
import { ConnectionTest } from "./connection-test.tsx";

type Provider = Pick<ProviderInfo, "id" | "name" | "envVarName" | "fields"> & {
  configured?: boolean;
  isConfigured?: boolean;
};
type Field = NonNullable<ProviderInfo["fields"]>[number];

const configured = (p: Provider) => Boolean(p.isConfigured ?? p.configured);
/** A provider reached at an address rather than with a key (Ollama: `OLLAMA_BASE_URL`). */
const takesUrl = (p: Provider) => p.envVarName.endsWith("_URL");

/** Posts a provider update; the status line says what happened. */
function useStore(provider: Provider, onChange: () => Promise<void>) {
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>();
  const store = async (body: Record<string, unknown>, done: string): Promise<boolean> => {
    setError(undefined);
    setStatus(undefined);
    try {
      await api("/api/chat/providers", { method: "POST", body: { provider: provider.id, ...body } });
      setStatus(done);
      await onChange();
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    }
  };
  const messages = (
    <>
      {status && <small role="status">{status}</small>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
  return { store, messages };
}

const Badge = ({ provider }: { provider: Provider }) => (
  <span class={configured(provider) ? "badge badge-ok" : "badge"}>
    {configured(provider) ? "configured" : "not set"}
  </span>
);

/** A provider with several fields (Bedrock): every field is needed, so the button waits for all. */
function FieldsRow({
  provider,
  fields,
  onChange,
}: {
  provider: Provider;
  fields: Field[];
  onChange(): Promise<void>;
}) {
  const empty = () => Object.fromEntries(fields.map((f) => [f.name, ""]));
  const [values, setValues] = useState<Record<string, string>>(empty);
  const { store, messages } = useStore(provider, onChange);
  const complete = fields.every((f) => values[f.name]?.trim());
  return (
    <li class="provider" data-provider={provider.id}>
      <form
        class="fields"
        onSubmit={async (e) => {
          e.preventDefault();
          if (complete && (await store({ credentials: values }, "Credentials saved."))) setValues(empty());
        }}
      >
        <div class="row">
          <strong>{provider.name}</strong>
          <Badge provider={provider} />
        </div>
        {fields.map((f) => {
          const id = `${provider.id}-${f.name}`;
          const input = {
            id,
            autocomplete: "off",
            placeholder: f.set ? `${f.envVarName} (stored)` : f.envVarName,
            value: values[f.name] ?? "",
            onInput: (e: TargetedEvent<HTMLInputElement>) => {
              const value = e.currentTarget.value;
              setValues((v) => ({ ...v, [f.name]: value }));
            },
          };
          return (
            <div class="row" key={f.name}>
              <label for={id}>{f.label}</label>
              {f.secret ? <input type="password" {...input} /> : <input type="text" {...input} />}
            </div>
          );
        })}
        <div class="row">
          <button type="submit" class="btn btn-small" disabled={!complete}>
            Save credentials
          </button>
          {configured(provider) && (
            <button
              type="button"
              class="btn btn-small btn-danger"
              onClick={() => void store({ apiKey: null }, "Credentials cleared.")}
            >
              Clear
            </button>
          )}
        </div>
      </form>
      {messages}
    </li>
  );
}

function ProviderRow({ provider, onChange }: { provider: Provider; onChange(): Promise<void> }): JSX.Element {
  if (provider.fields?.length)
    return <FieldsRow provider={provider} fields={provider.fields} onChange={onChange} />;
  return <KeyRow provider={provider} onChange={onChange} />;
}

function KeyRow({ provider, onChange }: { provider: Provider; onChange(): Promise<void> }): JSX.Element {
  const [key, setKey] = useState("");
  const id = `key-${provider.id}`;
  const url = takesUrl(provider);
  const { store: post, messages } = useStore(provider, onChange);
  const store = async (apiKey: string) => {
    const what = url ? "URL" : "Key";
    if (await post({ apiKey }, apiKey ? `${what} saved.` : `${what} cleared.`)) setKey("");
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
        <Badge provider={provider} />
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
      {messages}
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
