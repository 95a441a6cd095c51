/**
 * Create and edit forms for agents and fleets (`POST`/`PATCH /v1/agents`, `/v1/fleets`). A fleet's
 * members are chosen with checkboxes in the order they are ticked, which is the order a sequential
 * fleet passes work along. The server's validation messages are shown in place.
 */

import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Agent, Fleet } from "../../../schemas/agents.ts";
import { api } from "../../lib/api.ts";
import { ErrorLine } from "../common.tsx";

export const CAPABILITIES = [
  "CODE_REVIEW",
  "DOCUMENTATION",
  "TESTING",
  "PLANNING",
  "RESEARCH",
  "CHAT",
  "EXECUTION",
] as const;
const FLEET_TYPES = ["CODE_DEVELOPMENT", "RESEARCH", "CREATIVE", "SUPPORT", "CUSTOM"] as const;
const PATTERNS = ["sequential", "parallel", "hierarchical", "dynamic"] as const;
const STATUSES = ["active", "inactive", "archived"] as const;

/** Creates (POST) or updates (PATCH) an agent or fleet; the saved record, or the error shown in the form. */
async function saveRecord<T>(
  collection: "agents" | "fleets",
  existing: { id: string } | undefined,
  body: Record<string, unknown>,
  onSaved: (saved: T) => void,
  onError: (error: unknown) => void,
): Promise<void> {
  try {
    const path = existing ? `/v1/${collection}/${encodeURIComponent(existing.id)}` : `/v1/${collection}`;
    onSaved(await api<T>(path, { method: existing ? "PATCH" : "POST", body }));
  } catch (error) {
    onError(error);
  }
}

/** A labelled one-line text input. */
function TextField(props: {
  label: string;
  value: string;
  required?: boolean;
  onInput: (value: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        required={props.required}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}

function toggle(list: string[], value: string, on: boolean): string[] {
  return on ? [...list.filter((v) => v !== value), value] : list.filter((v) => v !== value);
}

export function AgentForm(props: {
  agent?: Agent;
  onSaved: (agent: Agent) => void;
  onCancel: () => void;
}): JSX.Element {
  const a = props.agent;
  const [name, setName] = useState(a?.name ?? "");
  const [role, setRole] = useState(a?.role ?? "");
  const [description, setDescription] = useState(a?.description ?? "");
  const [capabilities, setCapabilities] = useState<string[]>(a?.capabilities ?? ["CHAT"]);
  const [model, setModel] = useState(a?.model ?? "");
  const [instructions, setInstructions] = useState(a?.instructions ?? "");
  const [status, setStatus] = useState(a?.status ?? "active");
  const [error, setError] = useState<unknown>();

  const save = async (e: Event) => {
    e.preventDefault();
    const body = { name, role, description, capabilities, model: model.trim() || null, instructions, status };
    await saveRecord("agents", a, body, props.onSaved, setError);
  };

  return (
    <form class="panel stack" onSubmit={save} aria-labelledby="agent-form-title">
      <h3 id="agent-form-title">{a ? `Edit ${a.name}` : "New agent"}</h3>
      <TextField label="Name" required value={name} onInput={setName} />
      <TextField label="Role" required value={role} onInput={setRole} />
      <TextField label="Description" value={description} onInput={setDescription} />
      <fieldset>
        <legend>Capabilities</legend>
        <div class="checks">
          {CAPABILITIES.map((c) => (
            <label key={c}>
              <input
                type="checkbox"
                checked={capabilities.includes(c)}
                onChange={(e) => setCapabilities(toggle(capabilities, c, e.currentTarget.checked))}
              />{" "}
              {c.toLowerCase().replace("_", " ")}
            </label>
          ))}
        </div>
      </fieldset>
      <label class="field">
        <span>
          Model (provider/model; empty follows the server default{a ? `, now ${a.effective_model}` : ""})
        </span>
        <input
          value={model}
          placeholder="openai/gpt-5-mini"
          onInput={(e) => setModel(e.currentTarget.value)}
        />
      </label>
      <label class="field">
        <span>Instructions (system prompt)</span>
        <textarea rows={3} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
      </label>
      <label class="field">
        <span>Status</span>
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Agent["status"])}>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <ErrorLine error={error} />
      <div class="row">
        <button type="submit" class="btn btn-primary">
          {a ? "Save agent" : "Create agent"}
        </button>
        <button type="button" class="btn" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function FleetForm(props: {
  fleet?: Fleet;
  agents: Agent[];
  onSaved: (fleet: Fleet) => void;
  onCancel: () => void;
}): JSX.Element {
  const f = props.fleet;
  const [name, setName] = useState(f?.name ?? "");
  const [description, setDescription] = useState(f?.description ?? "");
  const [type, setType] = useState(f?.type ?? "CUSTOM");
  const [members, setMembers] = useState<string[]>(f?.agent_ids ?? []);
  const [pattern, setPattern] = useState(f?.coordination_pattern ?? "sequential");
  const [status, setStatus] = useState(f?.status ?? "active");
  const [error, setError] = useState<unknown>();
  const nameOf = (id: string) => props.agents.find((a) => a.id === id)?.name ?? id;

  const save = async (e: Event) => {
    e.preventDefault();
    const body = { name, description, type, agent_ids: members, coordination_pattern: pattern, status };
    await saveRecord("fleets", f, body, props.onSaved, setError);
  };

  return (
    <form class="panel stack" onSubmit={save} aria-labelledby="fleet-form-title">
      <h3 id="fleet-form-title">{f ? `Edit ${f.name}` : "New fleet"}</h3>
      <TextField label="Name" required value={name} onInput={setName} />
      <TextField label="Description" value={description} onInput={setDescription} />
      <label class="field">
        <span>Type</span>
        <select value={type} onChange={(e) => setType(e.currentTarget.value as Fleet["type"])}>
          {FLEET_TYPES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Members, in order</legend>
        {props.agents.length === 0 ? <p class="empty">Create an agent first.</p> : null}
        <div class="checks">
          {props.agents.map((a) => (
            <label key={a.id}>
              <input
                type="checkbox"
                checked={members.includes(a.id)}
                onChange={(e) => setMembers(toggle(members, a.id, e.currentTarget.checked))}
              />{" "}
              {a.name}
            </label>
          ))}
        </div>
        {members.length > 0 ? <p class="muted">Order: {members.map(nameOf).join(" → ")}</p> : null}
      </fieldset>
      <label class="field">
        <span>Coordination</span>
        <select
          value={pattern}
          onChange={(e) => setPattern(e.currentTarget.value as Fleet["coordination_pattern"])}
        >
          {PATTERNS.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>Status</span>
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Fleet["status"])}>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <ErrorLine error={error} />
      <div class="row">
        <button type="submit" class="btn btn-primary">
          {f ? "Save fleet" : "Create fleet"}
        </button>
        <button type="button" class="btn" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
