/**
 * The UI's entry: renders the app shell into #root. The stored theme is already on <html> (the blocking
 * web/theme-boot.js ran before the first paint); applying it again covers a page built without it.
 */
import { render } from "preact";
import { App } from "./app.tsx";
import { applyStoredTheme } from "./lib/theme.ts";
import "./style.css";

applyStoredTheme();
const root = document.getElementById("root");
if (root) render(<App />, root);
