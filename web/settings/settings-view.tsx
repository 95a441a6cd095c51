/** Settings: chat settings and provider keys (built in the following commits). */
import type { JSX } from "preact";

export function SettingsView(): JSX.Element {
  return <p class="empty">Settings.</p>;
}
