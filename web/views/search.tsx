import type { JSX } from "preact";
export default function SearchView(): JSX.Element {
  return <p class="empty">Search: coming soon.</p>;
}
