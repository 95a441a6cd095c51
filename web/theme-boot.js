/*
 * Runs before the first paint (a classic, blocking script in <head>, served as a file: the CSP allows no
 * inline script): puts the theme the user picked with the toggle on <html>, so a stored theme that
 * differs from the system's never flashes the system one. The app (web/lib/theme.ts) owns the key.
 */
try {
  const stored = localStorage.getItem("atrium.theme");
  if (stored === "light" || stored === "dark") document.documentElement.dataset.theme = stored;
} catch {
  // Storage refused (privacy settings): the system theme stands.
}
