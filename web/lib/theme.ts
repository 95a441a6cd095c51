/**
 * Light/dark: the system's scheme unless the user picked one with the toggle, which is stored in
 * localStorage and set as `data-theme` on <html> (style.css reads it).
 */
export type Theme = "light" | "dark";
const KEY = "atrium.theme";

function systemTheme(): Theme {
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function currentTheme(): Theme {
  const set = document.documentElement.dataset.theme;
  return set === "light" || set === "dark" ? set : systemTheme();
}

export function applyStoredTheme(): void {
  const stored = localStorage.getItem(KEY);
  if (stored === "light" || stored === "dark") document.documentElement.dataset.theme = stored;
}

export function setTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(KEY, theme);
}
