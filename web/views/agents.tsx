import type { JSX } from "preact";
export default function AgentsView(): JSX.Element {
  return <p class="empty">Agents: coming soon.</p>;
}
