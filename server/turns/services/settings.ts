/**
 * Local settings (spec "Settings patch"): the non-secret policy with its revision, and revision-checked
 * edits in three shapes (batch with `unset`, single field, profile selection). Every edit is validated
 * against every profile before the file is written atomically; saved policy applies after a restart.
 * Validation never reads an environment value: the variables named by the policy stay unread here.
 */
import { parse, stringify } from "smol-toml";
import type { EnvSource } from "../../config/env.ts";
import { PolicyError, resolvePolicy } from "../../config/policy.ts";
import { readPolicyText, writePolicyAtomically } from "../../config/policy-file.ts";
import { AppError } from "../../http/errors.ts";
import type { SandboxReport } from "../../sandbox/isolation.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";

type Table = Record<string, unknown>;

export interface SettingsUpdate {
  scope: string;
  path: string;
  value?: unknown;
  unset?: boolean;
}

export type SettingsPatch =
  | { revision: string; updates: SettingsUpdate[]; default_profile?: string }
  | { revision: string; scope: string; path: string; value: unknown }
  | { revision: string; profile: string };

/** Says every variable is present and gives no value: validation without reading secrets. */
const NO_SECRETS: EnvSource = { get: () => undefined, has: () => true };

const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);
const invalid = (message: string) => new AppError("invalid", message);

export class TurnSettingsService {
  /**
   * `path` is the policy file in use; edits go to `writePath` (the same file, or the data dir's copy when
   * the binary's built-in policy is in use) and are read from there afterwards.
   */
  constructor(
    private path: string,
    private readonly writePath: string,
    private readonly sandbox: () => SandboxReport,
    private readonly analytics: Pick<TurnAnalytics, "capture">,
  ) {}

  read() {
    const { text, revision } = readPolicyText(this.path);
    return this.view(parse(text) as Table, revision);
  }

  patch(body: SettingsPatch) {
    const { text, revision } = readPolicyText(this.path);
    if (body.revision !== revision) {
      throw new AppError(
        "conflict",
        "The policy file changed since it was read; reload the settings and retry",
        {
          code: "settings_revision_conflict",
        },
      );
    }
    const doc = parse(text) as Table;
    if ("updates" in body) {
      for (const update of body.updates) this.apply(doc, update);
      if (body.default_profile !== undefined) this.selectProfile(doc, body.default_profile);
    } else if ("profile" in body) {
      this.selectProfile(doc, body.profile);
    } else {
      this.apply(doc, { scope: body.scope, path: body.path, value: body.value });
    }
    try {
      resolvePolicy(doc, this.path, NO_SECRETS);
    } catch (error) {
      if (error instanceof PolicyError) throw invalid(error.message.replace(`${this.path}: `, ""));
      throw error;
    }
    const next = writePolicyAtomically(this.writePath, `${stringify(doc)}\n`);
    this.path = this.writePath;
    this.analytics.capture("settings_policy_updated", {
      shape: "updates" in body ? "batch" : "profile" in body ? "profile" : "field",
    });
    return this.view(doc, next);
  }

  private selectProfile(doc: Table, profile: string) {
    const profiles = isTable(doc.profiles) ? doc.profiles : {};
    if (!Object.hasOwn(profiles, profile)) throw invalid(`profile '${profile}' does not exist`);
    doc.config = { ...(isTable(doc.config) ? doc.config : {}), default_profile: profile };
  }

  private apply(doc: Table, update: SettingsUpdate) {
    const keys = update.path.split(".");
    if (keys.length < 2 || keys.some((k) => !/^[a-z_][a-z0-9_]*$/.test(k))) {
      throw invalid(`'${update.path}' is not a setting path (section.key)`);
    }
    let root: Table;
    if (update.scope === "defaults") {
      if (update.unset) throw invalid("defaults cannot be reset; set a value instead");
      doc.defaults = isTable(doc.defaults) ? doc.defaults : {};
      root = doc.defaults as Table;
    } else {
      const profiles = isTable(doc.profiles) ? doc.profiles : {};
      if (!Object.hasOwn(profiles, update.scope))
        throw invalid(`scope '${update.scope}' is neither defaults nor a profile`);
      root = profiles[update.scope] as Table;
    }
    const last = keys.pop() as string;
    let node = root;
    for (const key of keys) {
      if (!isTable(node[key])) {
        if (update.unset) return;
        node[key] = {};
      }
      node = node[key] as Table;
    }
    if (update.unset) {
      delete node[last];
      return;
    }
    if (update.value === undefined || update.value === null)
      throw invalid(`'${update.path}' needs a value (or unset: true)`);
    node[last] = update.value;
  }

  private view(doc: Table, revision: string) {
    const config = isTable(doc.config) ? doc.config : {};
    const profile = typeof config.default_profile === "string" ? config.default_profile : "";
    const profiles = isTable(doc.profiles) ? doc.profiles : {};
    let effective: Table = {};
    try {
      effective = resolvePolicy(doc, this.path, NO_SECRETS).settings as unknown as Table;
    } catch {
      // A hand-edited file that no longer validates still shows its raw values.
    }
    return {
      revision,
      profile,
      profiles: Object.keys(profiles),
      defaults: isTable(doc.defaults) ? doc.defaults : {},
      overrides: isTable(profiles[profile]) ? (profiles[profile] as Table) : {},
      effective,
      sandbox: this.sandbox(),
      appliesAfterRestart: true as const,
    };
  }
}
