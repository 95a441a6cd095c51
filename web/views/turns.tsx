import type { JSX } from "preact";
export default function TurnsView(): JSX.Element {
  return <p class="empty">Turns: coming soon.</p>;
}
