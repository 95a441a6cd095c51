/**
 * Access tokens (team servers): a signed-in user creates a personal access token (name, scopes, an
 * optional expiry), sees it once to copy, lists them (scopes, created, last used, expiry) and revokes
 * them (`/api/auth/tokens`, docs/auth.md#personal-access-tokens). Local mode has no tokens (nothing on
 * loopback needs one): the route is absent there and the panel is not shown.
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { AccessToken, CreatedToken } from "../../schemas/auth.ts";
import { ApiError, api } from "../lib/api.ts";

type Token = typeof AccessToken.static;
type Created = typeof CreatedToken.static;

const SCOPES: { scope: string; label: string }[] = [
  { scope: "mcp", label: "MCP (/mcp, atrium mcp)" },
  { scope: "chat", label: "chat" },
  { scope: "chat:read", label: "chat, read only" },
  { scope: "turns", label: "turns and files" },
  { scope: "turns:read", label: "turns and files, read only" },
  { scope: "search", label: "search" },
  { scope: "search:read", label: "search, read only" },
  { scope: "agents", label: "agents" },
  { scope: "agents:read", label: "agents, read only" },
];

const day = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString() : undefined);

function NewToken({ onCreated }: { onCreated(created: Created): void }): JSX.Element {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>([]);
  const [days, setDays] = useState("");
  const [error, setError] = useState<string | undefined>();
  const toggle = (scope: string, on: boolean) =>
    setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const body = { name: name.trim(), scopes, ...(days ? { expiresInDays: Number(days) } : {}) };
      onCreated(await api<Created>("/api/auth/tokens", { method: "POST", body }));
      setName("");
      setScopes([]);
      setDays("");
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} aria-label="New access token">
      <div class="field">
        <label for="token-name">Name</label>
        <input
          id="token-name"
          maxLength={100}
          placeholder="what it is for"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
      </div>
      <fieldset class="field">
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, label }) => (
          <label class="row" key={scope}>
            <input
              type="checkbox"
              name="token-scope"
              value={scope}
              checked={scopes.includes(scope)}
              onChange={(e) => toggle(scope, (e.target as HTMLInputElement).checked)}
            />
            <code>{scope}</code> {label}
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for="token-days">Expires after (days, empty: never)</label>
        <input
          id="token-days"
          type="number"
          min={1}
          max={365}
          value={days}
          onInput={(e) => setDays((e.target as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" class="btn btn-primary" disabled={!name.trim() || scopes.length === 0}>
        Create token
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

function TokenRow({ token, onRevoke }: { token: Token; onRevoke(): void }): JSX.Element {
  const expiry = token.expired
    ? "expired"
    : day(token.expiresAt)
      ? `expires ${day(token.expiresAt)}`
      : "no expiry";
  return (
    <li data-token={token.id}>
      <div class="row">
        <strong>{token.name}</strong>
        <span class="muted">{token.scopes.join(", ")}</span>
        <span class="spacer" />
        <button type="button" class="btn btn-small btn-danger" onClick={onRevoke}>
          Revoke<span class="sr-only"> {token.name}</span>
        </button>
      </div>
      <small class="muted">
        created {day(token.createdAt)} ·{" "}
        {token.lastUsedAt ? `last used ${day(token.lastUsedAt)}` : "never used"} · {expiry}
      </small>
    </li>
  );
}

export function TokensPanel(): JSX.Element | null {
  const [tokens, setTokens] = useState<Token[] | undefined>();
  const [absent, setAbsent] = useState(false);
  const [shown, setShown] = useState<Created | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = () =>
    api<{ tokens: Token[] }>("/api/auth/tokens")
      .then((r) => setTokens(r.tokens))
      .catch((e: Error) =>
        e instanceof ApiError && e.status === 404 ? setAbsent(true) : setError(e.message),
      );
  useEffect(() => void load(), []);
  if (absent) return null;
  const revoke = async (token: Token) => {
    setError(undefined);
    try {
      await api(`/api/auth/tokens/${encodeURIComponent(token.id)}`, { method: "DELETE" });
      if (shown?.id === token.id) setShown(undefined);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section class="panel" id="tokens" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Access tokens</h2>
      <p class="muted">
        For scripts, other machines and MCP clients: send a token as <code>Authorization: Bearer</code>. It
        reaches only what its scopes cover, and is shown once.
      </p>
      {shown && (
        <div class="notice" role="status">
          <p>
            Token <strong>{shown.name}</strong> created. Copy it now: it is not shown again.
          </p>
          <label class="sr-only" for="token-value">
            The new token
          </label>
          <input
            id="token-value"
            readOnly
            value={shown.token}
            onFocus={(e) => (e.target as HTMLInputElement).select()}
          />
          <button type="button" class="btn btn-small" onClick={() => setShown(undefined)}>
            Done
          </button>
        </div>
      )}
      <NewToken
        onCreated={(created) => {
          setShown(created);
          void load();
        }}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {tokens && tokens.length === 0 && <p class="muted">No tokens yet.</p>}
      <ul class="list" aria-label="Your access tokens">
        {tokens?.map((token) => (
          <TokenRow key={token.id} token={token} onRevoke={() => void revoke(token)} />
        ))}
      </ul>
    </section>
  );
}
