/**
 * The Agents view (#/agents): the caller's agents and fleets in two lists, a create/edit form for
 * either, and a chat pane over the WebSocket with the agent or fleet picked, each agent's
 * contribution labelled.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Agent, Fleet } from "../../schemas/agents.ts";
import { AgentChat, type ChatTarget } from "./agents/agent-chat.tsx";
import { AgentForm, FleetForm } from "./agents/forms.tsx";
import { ErrorLine, useLoad } from "./common.tsx";
import "./views.css";

type Pane =
  | { kind: "none" }
  | { kind: "agent"; agent?: Agent }
  | { kind: "fleet"; fleet?: Fleet }
  | { kind: "chat"; target: ChatTarget };

export default function AgentsView(): JSX.Element {
  const agents = useLoad<{ agents: Agent[] }>("/v1/agents?limit=200");
  const fleets = useLoad<{ fleets: Fleet[] }>("/v1/fleets?limit=200");
  const [pane, setPane] = useState<Pane>({ kind: "none" });
  const agentList = agents.data?.agents ?? [];
  const fleetList = fleets.data?.fleets ?? [];
  const nameOf = (id: string) => agentList.find((a) => a.id === id)?.name ?? "?";

  return (
    <div class="views-split agents-view">
      <aside class="views-side" aria-label="Agents and fleets">
        <h2 class="view-title">Agents</h2>
        <section aria-labelledby="agents-list-title">
          <div class="row">
            <h3 id="agents-list-title">Agents</h3>
            <button type="button" class="btn btn-small" onClick={() => setPane({ kind: "agent" })}>
              New agent
            </button>
          </div>
          <ErrorLine error={agents.error} />
          {agents.data && agentList.length === 0 ? (
            <p class="empty">
              No agents yet. An agent is a model with a role, capabilities and instructions.
            </p>
          ) : null}
          <ul class="list">
            {agentList.map((a) => (
              <li key={a.id} class="entity-item">
                <div>
                  <strong>{a.name}</strong> <span class="muted">{a.role}</span>
                  {a.status !== "active" ? <span class="badge">{a.status}</span> : null}
                </div>
                <EntityActions
                  name={a.name}
                  onChat={() => setPane({ kind: "chat", target: { id: a.id, type: "agent", name: a.name } })}
                  onEdit={() => setPane({ kind: "agent", agent: a })}
                />
              </li>
            ))}
          </ul>
        </section>
        <section aria-labelledby="fleets-list-title">
          <div class="row">
            <h3 id="fleets-list-title">Fleets</h3>
            <button type="button" class="btn btn-small" onClick={() => setPane({ kind: "fleet" })}>
              New fleet
            </button>
          </div>
          <ErrorLine error={fleets.error} />
          {fleets.data && fleetList.length === 0 ? (
            <p class="empty">No fleets yet. A fleet runs several agents on one message, in a pattern.</p>
          ) : null}
          <ul class="list">
            {fleetList.map((f) => (
              <li key={f.id} class="entity-item">
                <div>
                  <strong>{f.name}</strong>{" "}
                  <span class="muted">
                    {f.coordination_pattern}: {f.agent_ids.map(nameOf).join(", ")}
                  </span>
                </div>
                <EntityActions
                  name={f.name}
                  onChat={() => setPane({ kind: "chat", target: { id: f.id, type: "fleet", name: f.name } })}
                  onEdit={() => setPane({ kind: "fleet", fleet: f })}
                />
              </li>
            ))}
          </ul>
        </section>
      </aside>
      <div class="agents-main">
        {pane.kind === "agent" ? (
          <AgentForm
            key={pane.agent?.id ?? "new"}
            agent={pane.agent}
            onCancel={() => setPane({ kind: "none" })}
            onSaved={() => {
              void agents.reload();
              setPane({ kind: "none" });
            }}
          />
        ) : pane.kind === "fleet" ? (
          <FleetForm
            key={pane.fleet?.id ?? "new"}
            fleet={pane.fleet}
            agents={agentList}
            onCancel={() => setPane({ kind: "none" })}
            onSaved={() => {
              void fleets.reload();
              setPane({ kind: "none" });
            }}
          />
        ) : pane.kind === "chat" ? (
          <AgentChat key={`${pane.target.type}:${pane.target.id}`} target={pane.target} />
        ) : (
          <p class="empty">
            Pick Chat on an agent or fleet to talk to it, or create one. With no model configured, each agent
            answers with the offline model's message.
          </p>
        )}
      </div>
    </div>
  );
}

/** The Chat and Edit buttons of one agent or fleet in the lists. */
function EntityActions(props: { name: string; onChat: () => void; onEdit: () => void }): JSX.Element {
  return (
    <div class="row">
      <button
        type="button"
        class="btn btn-small"
        aria-label={`Chat with ${props.name}`}
        onClick={props.onChat}
      >
        Chat
      </button>
      <button type="button" class="btn btn-small" aria-label={`Edit ${props.name}`} onClick={props.onEdit}>
        Edit
      </button>
    </div>
  );
}
