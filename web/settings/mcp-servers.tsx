/**
 * MCP servers in Settings (`/api/chat/mcp-servers`, docs/mcp-tools.md): the servers a user may use as
 * tools, the operator's (read-only) and their own, each with its state (connected with its tools, failed
 * with the server's reason, or disabled) found by listing its tools, which connects to it. A user adds
 * one (HTTP by URL with a token or headers; stdio by a command that runs in their own sandbox), removes
 * it, disables it, and sets "ask before each call" or "allow". Secrets go in once and never come back:
 * the list names the stored headers and says whether a token is stored.
 */
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { McpServerBody, McpServerInfo, McpToolInfo } from "../../schemas/mcp-servers.ts";
import { api } from "../lib/api.ts";

type State =
  | { state: "connecting" }
  | { state: "connected"; tools: McpToolInfo[] }
  | { state: "failed"; reason: string }
  | { state: "disabled" };

const APPROVALS = [
  { value: "ask", label: "Ask before each call" },
  { value: "allow", label: "Allow every call" },
] as const;

const TRANSPORTS = [
  { value: "http", label: "HTTP (Streamable HTTP, by URL)" },
  { value: "stdio", label: "stdio (a command run in your own sandbox)" },
] as const;

const path = (name: string) => `/api/chat/mcp-servers/${encodeURIComponent(name)}`;

/** "Name: value" lines as headers; a line without a colon is refused here with the line named. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon < 1) throw new Error(`Headers: "${line}" is not "Name: value"`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function NewServer({ onAdded }: { onAdded(): void }): JSX.Element {
  const [name, setName] = useState("");
  const [transport, setTransport] = useState<"http" | "stdio">("http");
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const [headers, setHeaders] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [approval, setApproval] = useState<"ask" | "allow">("ask");
  const [error, setError] = useState<string | undefined>();
  const value = (set: (v: string) => void) => (e: Event) =>
    set((e.target as HTMLInputElement | HTMLTextAreaElement).value);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const body: McpServerBody =
        transport === "http"
          ? {
              name: name.trim(),
              transport,
              url: url.trim(),
              approval,
              ...(token.trim() ? { token: token.trim() } : {}),
              ...(headers.trim() ? { headers: parseHeaders(headers) } : {}),
            }
          : {
              name: name.trim(),
              transport,
              command: command.trim(),
              args: args.split("\n").filter((a) => a.trim() !== ""),
              approval,
            };
      await api(`/api/chat/mcp-servers`, { method: "POST", body });
      for (const set of [setName, setUrl, setToken, setHeaders, setCommand, setArgs]) set("");
      onAdded();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const ready = name.trim() && (transport === "http" ? url.trim() : command.trim());
  return (
    <form onSubmit={(e) => void submit(e)} aria-label="Add an MCP server">
      <h3>Add a server</h3>
      <div class="field">
        <label for="mcp-name">Name (prefixes its tools' names)</label>
        <input id="mcp-name" maxLength={32} placeholder="files" value={name} onInput={value(setName)} />
      </div>
      <fieldset class="field">
        <legend>Transport</legend>
        {TRANSPORTS.map((t) => (
          <label class="row" key={t.value}>
            <input
              type="radio"
              name="mcp-transport"
              value={t.value}
              checked={transport === t.value}
              onChange={() => setTransport(t.value)}
            />
            {t.label}
          </label>
        ))}
      </fieldset>
      {transport === "http" ? (
        <>
          <div class="field">
            <label for="mcp-url">URL</label>
            <input id="mcp-url" type="url" placeholder="https://…/mcp" value={url} onInput={value(setUrl)} />
          </div>
          <div class="field">
            <label for="mcp-token">Token (optional, sent as Authorization: Bearer; not shown again)</label>
            <input
              id="mcp-token"
              type="password"
              autoComplete="off"
              value={token}
              onInput={value(setToken)}
            />
          </div>
          <div class="field">
            <label for="mcp-headers">Headers (optional, one "Name: value" a line; not shown again)</label>
            <textarea id="mcp-headers" rows={2} value={headers} onInput={value(setHeaders)} />
          </div>
        </>
      ) : (
        <>
          <div class="field">
            <label for="mcp-command">Command (installed in your sandbox)</label>
            <input id="mcp-command" placeholder="node" value={command} onInput={value(setCommand)} />
          </div>
          <div class="field">
            <label for="mcp-args">Arguments (one a line)</label>
            <textarea id="mcp-args" rows={2} value={args} onInput={value(setArgs)} />
          </div>
        </>
      )}
      <div class="field">
        <label for="mcp-approval">Tool calls</label>
        <select
          id="mcp-approval"
          value={approval}
          onChange={(e) => setApproval((e.target as HTMLSelectElement).value as "ask" | "allow")}
        >
          {APPROVALS.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" class="btn btn-primary" disabled={!ready}>
        Add server
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

function StateBadge({ state }: { state: State }): JSX.Element {
  const text =
    state.state === "connected"
      ? "connected"
      : state.state === "failed"
        ? "failed"
        : state.state === "disabled"
          ? "disabled"
          : "connecting…";
  const tone = state.state === "connected" ? " badge-ok" : state.state === "failed" ? " badge-error" : "";
  return <span class={`badge${tone}`}>{text}</span>;
}

function ServerRow(props: {
  server: McpServerInfo;
  state: State;
  onChange(change: { approval?: "ask" | "allow"; enabled?: boolean }): void;
  onRemove(): void;
}): JSX.Element {
  const { server, state } = props;
  const mine = server.scope === "user";
  const where = server.transport === "http" ? server.url : [server.command, ...server.args].join(" ");
  const secrets = [
    server.hasToken ? "token stored" : "",
    ...server.headerNames.filter((h) => h.toLowerCase() !== "authorization").map((h) => `header ${h}`),
  ].filter(Boolean);
  const approvalId = `mcp-approval-${server.name}`;
  return (
    <li data-server={server.name} data-state={state.state}>
      <div class="row">
        <strong>{server.name}</strong>
        <span class="badge">{server.transport}</span>
        {!mine && <span class="badge">set by the operator</span>}
        <StateBadge state={state} />
        <span class="spacer" />
        {mine ? (
          <>
            <label class="sr-only" for={approvalId}>
              Tool calls of {server.name}
            </label>
            <select
              id={approvalId}
              value={server.approval}
              onChange={(e) =>
                props.onChange({ approval: (e.target as HTMLSelectElement).value as "ask" | "allow" })
              }
            >
              {APPROVALS.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </select>
            <label class="row">
              <input
                type="checkbox"
                checked={server.enabled}
                onChange={(e) => props.onChange({ enabled: (e.target as HTMLInputElement).checked })}
              />
              Enabled<span class="sr-only"> {server.name}</span>
            </label>
            <button type="button" class="btn btn-small btn-danger" onClick={props.onRemove}>
              Remove<span class="sr-only"> {server.name}</span>
            </button>
          </>
        ) : (
          <span class="muted">{APPROVALS.find((a) => a.value === server.approval)?.label}</span>
        )}
      </div>
      <small class="muted">
        <code>{where}</code>
        {secrets.length > 0 && ` · ${secrets.join(", ")}`}
      </small>
      {state.state === "failed" && <p class="error">{state.reason}</p>}
      {state.state === "connected" && (
        <details class="mcp-tools">
          <summary>
            {state.tools.length} tool{state.tools.length === 1 ? "" : "s"}
          </summary>
          <ul aria-label={`Tools of ${server.name}`}>
            {state.tools.map((tool) => (
              <li key={tool.name}>
                <code>
                  {server.name}__{tool.name}
                </code>
                {tool.description && <span class="muted"> {tool.description.split("\n")[0]}</span>}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

export function McpServersPanel(): JSX.Element {
  const [servers, setServers] = useState<McpServerInfo[] | undefined>();
  const [states, setStates] = useState<Record<string, State>>({});
  const [error, setError] = useState<string | undefined>();
  // Each server's latest probe: an earlier probe's late answer (a change, then "disable" before its tools
  // came back) must not overwrite what the latest one shows.
  const probes = useRef<Record<string, number>>({});
  const probe = (server: McpServerInfo) => {
    const n = (probes.current[server.name] ?? 0) + 1;
    probes.current[server.name] = n;
    const show = (state: State) => {
      if (probes.current[server.name] === n) setStates((s) => ({ ...s, [server.name]: state }));
    };
    if (!server.enabled) return show({ state: "disabled" });
    show({ state: "connecting" });
    void api<{ tools: McpToolInfo[] }>(`${path(server.name)}/tools`)
      .then((r) => ({ state: "connected", tools: r.tools }) as const)
      .catch((e: Error) => ({ state: "failed", reason: e.message }) as const)
      .then(show);
  };
  const load = () =>
    api<{ servers: McpServerInfo[] }>("/api/chat/mcp-servers")
      .then((r) => {
        setServers(r.servers);
        for (const server of r.servers) probe(server);
      })
      .catch((e: Error) => setError(e.message));
  useEffect(() => void load(), []);
  const act = async (run: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await run();
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section class="panel" id="mcp-servers" aria-labelledby="mcp-servers-title">
      <h2 id="mcp-servers-title">MCP servers</h2>
      <p class="muted">
        Tools of Model Context Protocol servers for your chats, agents and turns. An HTTP server is reached by
        this server; a stdio server runs in your own sandbox.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {servers && servers.length === 0 && <p class="muted">No MCP servers yet.</p>}
      <ul class="list" aria-label="Your MCP servers">
        {servers?.map((server) => (
          <ServerRow
            key={server.name}
            server={server}
            state={states[server.name] ?? { state: "connecting" }}
            onChange={(change) => void act(() => api(path(server.name), { method: "PATCH", body: change }))}
            onRemove={() => void act(() => api(path(server.name), { method: "DELETE" }))}
          />
        ))}
      </ul>
      <NewServer onAdded={() => void load()} />
    </section>
  );
}
