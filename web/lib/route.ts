/** Hash routes (`#/chat`, `#/settings`, ...): the server serves the same page for every /app/ path. */
import { useEffect, useState } from "preact/hooks";

export const ROUTES = ["chat", "turns", "search", "agents", "settings"] as const;
export type Route = (typeof ROUTES)[number];

export function parseRoute(hash: string): Route {
  const name = hash.replace(/^#\/?/, "").split(/[/?]/)[0] ?? "";
  return (ROUTES as readonly string[]).includes(name) ? (name as Route) : "chat";
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export function go(route: Route): void {
  location.hash = `#/${route}`;
}
