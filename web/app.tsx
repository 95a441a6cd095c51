/** The app shell: the top nav (Chat · Turns · Search · Agents · Settings), the theme toggle, the routed view. */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { SignIn, signOut, type Who, whoIsThere } from "./auth/sign-in.tsx";
import { ChatView } from "./chat/chat-view.tsx";
import { type Route, useRoute } from "./lib/route.ts";
import { currentTheme, setTheme, type Theme } from "./lib/theme.ts";
import { SettingsView } from "./settings/settings-view.tsx";
import AgentsView from "./views/agents.tsx";
import SearchView from "./views/search.tsx";
import TurnsView from "./views/turns.tsx";

const NAV: { route: Route; label: string }[] = [
  { route: "chat", label: "Chat" },
  { route: "turns", label: "Turns" },
  { route: "search", label: "Search" },
  { route: "agents", label: "Agents" },
  { route: "settings", label: "Settings" },
];

function ThemeToggle(): JSX.Element {
  const [theme, setState] = useState<Theme>(currentTheme);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      class="btn btn-small"
      aria-label={`Switch to ${next} theme`}
      onClick={() => {
        setTheme(next);
        setState(next);
      }}
    >
      {theme === "dark" ? "☀" : "☾"}
    </button>
  );
}

function View({ route }: { route: Route }): JSX.Element {
  switch (route) {
    case "turns":
      return <TurnsView />;
    case "search":
      return <SearchView />;
    case "agents":
      return <AgentsView />;
    case "settings":
      return <SettingsView />;
    default:
      return <ChatView />;
  }
}

export function App(): JSX.Element {
  const [who, setWho] = useState<Who | undefined>();
  const check = () => void whoIsThere().then(setWho);
  useEffect(check, []);
  if (!who) return <p class="empty">Loading…</p>;
  if (who.mode === "protected" && !who.user) return <SignIn onSignedIn={check} />;
  return <Shell who={who} onSignOut={() => void signOut().then(check, check)} />;
}

function Shell({ who, onSignOut }: { who: Who; onSignOut(): void }): JSX.Element {
  const route = useRoute();
  useEffect(() => {
    const label = NAV.find((n) => n.route === route)?.label ?? "Chat";
    document.title = `${label} · Atrium`;
  }, [route]);
  return (
    <div class="shell">
      <nav class="topnav" aria-label="Main">
        <span class="brand">Atrium</span>
        {NAV.map((n) => (
          <a key={n.route} href={`#/${n.route}`} aria-current={route === n.route ? "page" : undefined}>
            {n.label}
          </a>
        ))}
        <span class="spacer" />
        {who.user && (
          <>
            <span class="muted">{who.user.email ?? who.user.name}</span>
            <button type="button" class="btn btn-small" onClick={onSignOut}>
              Sign out
            </button>
          </>
        )}
        <ThemeToggle />
      </nav>
      <main class="view" id="view">
        <View route={route} />
      </main>
    </div>
  );
}
