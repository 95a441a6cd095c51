/** The model catalog (`GET /api/chat/models`) and what the picker needs from it. */
import type { Discovered, ModelInfo, Models } from "../../schemas/chat.ts";
import { api } from "../lib/api.ts";

/**
 * A model as the picker holds it: the catalog's entry, or one a provider's discovery found (which
 * knows only its key, name and provider).
 */
export type PickerModel = Pick<ModelInfo, "key" | "provider" | "id" | "name"> &
  Partial<Pick<ModelInfo, "reasoning" | "available" | "thinkingLevels">>;
export type Catalog = Pick<Models, "diagnostics"> &
  Partial<Pick<Models, "selectedModelKey" | "defaultThinkingLevel">> & { models: PickerModel[] };

/** The thinking menu of a model: the catalog's levels; empty when it does not reason. */
export function thinkingLevels(model: PickerModel | undefined): string[] {
  const levels = model?.reasoning ? (model.thinkingLevels ?? []) : [];
  return levels.length > 1 ? levels : [];
}

/** What the menu says: pi's highest level, `xhigh`, is the reference client's `max`. */
export const levelLabel = (level: string) => (level === "xhigh" ? "max" : level);

/** The wanted level if the model has it, else the nearest one it has below it, else its lowest. */
export function fitLevel(levels: string[], wanted: string): string {
  if (levels.includes(wanted)) return wanted;
  const order = ["off", "minimal", "low", "medium", "high", "xhigh"];
  const below = levels.filter((l) => order.indexOf(l) <= order.indexOf(wanted));
  return below.at(-1) ?? levels[0] ?? wanted;
}

export async function loadCatalog(): Promise<Catalog> {
  const raw = await api<Catalog>("/api/chat/models");
  // `id` is the model's own id; a catalog that sends the whole key there is read the same way.
  const models = raw.models.map((m) => {
    const id = m.id.startsWith(`${m.provider}/`) ? m.id.slice(m.provider.length + 1) : m.id;
    return { ...m, id, key: m.key ?? `${m.provider}/${id}` };
  });
  return { ...raw, models, diagnostics: raw.diagnostics ?? [] };
}

/** Only the built-in offline model: nothing is configured yet (the first-run card shows). */
export const onlyOffline = (catalog: Catalog) =>
  catalog.models.every((m) => m.provider === "offline" || m.available === false);

/** The model the picker starts on: the server's default when it is usable, else the first usable one. */
export function initialModelKey(catalog: Catalog): string {
  const usable = catalog.models.filter((m) => m.available !== false);
  if (usable.some((m) => m.key === catalog.selectedModelKey)) return catalog.selectedModelKey as string;
  return usable[0]?.key ?? catalog.models[0]?.key ?? "";
}

export type Found = Pick<Discovered, "diagnostics" | "reachable"> & { models: PickerModel[] };

/** A provider's models (`GET /api/chat/models/discover?provider=`), as picker entries. */
export async function discover(provider: string): Promise<Found> {
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
