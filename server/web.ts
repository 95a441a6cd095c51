/**
 * The chat UI at /app/ (Elysia serves /app the same): index.html, its stylesheet, and web/main.ts bundled
 * for the browser (embedded in a compiled binary; from source, bundled by Bun on first request and kept
 * in memory). Paths below /app/ that are not assets get index.html, so the UI can
 * route on the client. Only files listed here are served: no path from a request touches the disk.
 * `/favicon.ico` is the app icon (the desktop app's PNG; browsers take a PNG under that name).
 */
import { Elysia } from "elysia";
import iconPath from "../desktop/build/icon.png" with { type: "file" };
import indexFile from "../web/index.html" with { type: "file" };
import stylePath from "../web/style.css" with { type: "file" };
import { AppError } from "./http/errors.ts";
import { bundleWebUi } from "./web-bundle.ts";
import { PREBUILT_MAIN_JS } from "./web-prebuilt.ts";

// bun-types declare .html imports as HTML bundles; `type: "file"` makes it a path like any other file.
const indexPath = indexFile as unknown as string;

let bundle: Promise<string> | undefined;

/** The built UI script: embedded in a compiled binary, else bundled once (a failure retries next time). */
function mainBundle(): Promise<string> {
  if (PREBUILT_MAIN_JS !== undefined) return Promise.resolve(PREBUILT_MAIN_JS);
  bundle ??= bundleWebUi().catch((error) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

const html = () =>
  new Response(Bun.file(indexPath), { headers: { "content-type": "text/html; charset=utf-8" } });

export function webRoutes() {
  return new Elysia({ name: "atrium/web" })
    .get("/app/", html, { detail: { hide: true } })
    .get(
      "/favicon.ico",
      () =>
        new Response(Bun.file(iconPath), {
          headers: { "content-type": "image/png", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/app/assets/style.css",
      () => new Response(Bun.file(stylePath), { headers: { "content-type": "text/css; charset=utf-8" } }),
      { detail: { hide: true } },
    )
    .get(
      "/app/assets/main.js",
      async () =>
        new Response(await mainBundle(), { headers: { "content-type": "text/javascript; charset=utf-8" } }),
      { detail: { hide: true } },
    )
    .get(
      "/app/*",
      ({ params }) => {
        if (params["*"].startsWith("assets/")) throw AppError.notFound(`No asset /app/${params["*"]}`);
        return html();
      },
      { detail: { hide: true } },
    );
}
