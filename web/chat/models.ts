/** The model catalog (`GET /api/chat/models`) and what the picker needs from it. */
import { api } from "../lib/api.ts";

export interface ModelInfo {
  key: string;
  provider: string;
  id: string;
  name: string;
  reasoning?: boolean;
  available?: boolean;
}
export interface Catalog {
  models: ModelInfo[];
  selectedModelKey?: string;
  defaultThinkingLevel?: string;
  diagnostics: string[];
}

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;

export async function loadCatalog(): Promise<Catalog> {
  const raw = await api<Catalog>("/api/chat/models");
  const models = raw.models.map((m) => ({ ...m, key: m.key ?? `${m.provider}/${m.id}` }));
  return { ...raw, models, diagnostics: raw.diagnostics ?? [] };
}

/** Only the built-in offline model: nothing is configured yet (the first-run card shows). */
export const onlyOffline = (catalog: Catalog) => catalog.models.every((m) => m.provider === "offline");

export interface Discovered {
  models: ModelInfo[];
  diagnostics: string[];
  reachable: boolean;
}

/** A provider's models (`GET /api/chat/models/discover?provider=`), as picker entries. */
export async function discover(provider: string): Promise<Discovered> {
  const raw = await api<{
    models: { id: string; name?: string; key?: string }[];
    diagnostics?: string[];
    reachable?: boolean;
  }>(`/api/chat/models/discover?provider=${encodeURIComponent(provider)}`);
  return {
    models: raw.models.map((m) => ({
      key: m.key ?? `${provider}/${m.id}`,
      provider,
      id: m.id,
      name: m.name ?? m.id,
      available: true,
    })),
    diagnostics: raw.diagnostics ?? [],
    reachable: raw.reachable ?? raw.models.length > 0,
  };
}
