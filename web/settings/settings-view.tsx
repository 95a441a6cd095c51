/**
 * Settings: the chat settings (`/api/chat/settings`, with what an update means for open chats) and the
 * provider keys (`/api/chat/providers`: which are configured; set or clear a key; a key is write-only,
 * never shown back), the MCP servers used as tools (mcp-servers.tsx), and on a team server the user's
 * access tokens (tokens.tsx).
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api } from "../lib/api.ts";
import { McpServersPanel } from "./mcp-servers.tsx";
import { ProvidersPanel } from "./providers.tsx";
import { TokensPanel } from "./tokens.tsx";

type ShownSettings = Record<string, unknown> & {
  compaction?: { enabled?: boolean };
  retry?: { enabled?: boolean; maxRetries?: number };
};
interface Updated {
  effective?: ShownSettings;
  diagnostics?: string[];
  updateImpact?: { newSessionRecommended: boolean; resourceReloadRequired: boolean };
}

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];

function ChatSettings(): JSX.Element {
  const [settings, setSettings] = useState<ShownSettings | undefined>();
  const [status, setStatus] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api<ShownSettings & { effective?: ShownSettings }>("/api/chat/settings")
      .then((r) => setSettings(r.effective ?? r))
      .catch((e: Error) => setError(e.message));
  }, []);
  if (!settings)
    return (
      <section class="panel">{error ? <p class="error">{error}</p> : <p class="muted">Loading…</p>}</section>
    );

  const save = async (update: Record<string, unknown>) => {
    // Shown at once (a controlled checkbox would snap back until the answer); the answer then wins.
    setSettings((s) => {
      const next: ShownSettings = { ...s, ...update };
      for (const key of ["compaction", "retry"] as const)
        if (update[key]) next[key] = { ...s?.[key], ...(update[key] as object) };
      return next;
    });
    setError(undefined);
    setStatus(undefined);
    try {
      const r = await api<Updated>("/api/chat/settings", { method: "POST", body: { settings: update } });
      if (r.effective) setSettings(r.effective);
      const impact = r.updateImpact;
      const notes = [
        "Saved.",
        impact?.newSessionRecommended ? "Open chats keep their settings: start a new chat to use these." : "",
        impact?.resourceReloadRequired ? "Skills, prompts and extensions reload with the next chat." : "",
        ...(r.diagnostics ?? []),
      ];
      setStatus(notes.filter(Boolean).join(" "));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const select = (id: string, label: string, key: string, values: string[], hint: string) => (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={String(settings[key] ?? "")}
        onChange={(e) => void save({ [key]: (e.target as HTMLSelectElement).value })}
      >
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
      <small>{hint}</small>
    </div>
  );
  return (
    <section class="panel" aria-labelledby="chat-settings-title">
      <h2 id="chat-settings-title">Chat settings</h2>
      {select(
        "set-thinking",
        "Default thinking level",
        "defaultThinkingLevel",
        LEVELS,
        "How much a reasoning model thinks before answering.",
      )}
      {select(
        "set-steering",
        "Steering messages",
        "steeringMode",
        ["one-at-a-time", "all"],
        "Messages sent while a reply runs: delivered one at a time or all together.",
      )}
      {select(
        "set-followup",
        "Follow-up messages",
        "followUpMode",
        ["one-at-a-time", "all"],
        "Messages queued for after the reply.",
      )}
      <div class="field">
        <label class="row">
          <input
            type="checkbox"
            checked={settings.compaction?.enabled !== false}
            onChange={(e) => void save({ compaction: { enabled: (e.target as HTMLInputElement).checked } })}
          />
          Compact long conversations automatically
        </label>
        <label class="row">
          <input
            type="checkbox"
            checked={settings.retry?.enabled !== false}
            onChange={(e) => void save({ retry: { enabled: (e.target as HTMLInputElement).checked } })}
          />
          Retry when the provider fails for a moment
        </label>
      </div>
      {status && (
        <p class="notice" role="status">
          {status}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

export function SettingsView(): JSX.Element {
  return (
    <div class="view-pad">
      <h1>Settings</h1>
      <ProvidersPanel />
      <ChatSettings />
      <McpServersPanel />
      <TokensPanel />
    </div>
  );
}
