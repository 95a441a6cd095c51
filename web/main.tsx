/** The UI's entry: applies the stored theme, then renders the app shell into #root. */
import { render } from "preact";
import { App } from "./app.tsx";
import { applyStoredTheme } from "./lib/theme.ts";
import "./style.css";

applyStoredTheme();
const root = document.getElementById("root");
if (root) render(<App />, root);
