/**
 * The chat UI at /app/ (Elysia serves /app the same): the files scripts/build-web.ts built ahead of time,
 * embedded in a compiled binary or read from build/web/ when running from source (listed once; nothing
 * is bundled on request). Assets have content-hashed names and are cached for a year; index.html is
 * never cached and carries the UI's Content-Security-Policy. Paths below /app/ that are not assets get
 * index.html, so the UI can route on the client. Only listed files are served: a request's path is a
 * key into that list, never a path on disk. `/favicon.ico` is the app icon (the desktop app's PNG).
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Elysia } from "elysia";
import iconPath from "../desktop/build/icon.png" with { type: "file" };
import { AppError } from "./http/errors.ts";
import { PREBUILT_WEB } from "./web-prebuilt.ts";

/** Where `npm run build:web` writes (scripts/build-web.ts). */
export const WEB_BUILD_DIR = resolve(import.meta.dir, "..", "build", "web");

/**
 * Same-origin only: scripts and styles from files (no inline code, no eval, no CDN), fetch/WebSocket to
 * this server, images from here or data:/blob: (previews). No framing, no plugins, no <base> rewrites.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
  map: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
};

/** Built file name (`index.html`, `assets/main-abc.js`) → path to read it from. */
function listBuild(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(join(dir, "index.html"))) return files;
  files.set("index.html", join(dir, "index.html"));
  const assets = join(dir, "assets");
  if (existsSync(assets)) {
    for (const name of readdirSync(assets)) files.set(`assets/${name}`, join(assets, name));
  }
  return files;
}

let built: Map<string, string> | undefined;
function files(): Map<string, string> {
  if (PREBUILT_WEB) {
    built ??= new Map(Object.entries(PREBUILT_WEB));
    return built;
  }
  const found = listBuild(WEB_BUILD_DIR);
  // Keep a complete build; an absent one is looked for again (a build may be running).
  if (found.size > 0) built = found;
  return built ?? found;
}

function page(): Response {
  const index = files().get("index.html");
  if (!index) {
    throw new AppError(
      "not_ready",
      "The web UI is not built: run `npm run build:web` (npm start and npm test build it first)",
    );
  }
  return new Response(Bun.file(index), {
    headers: {
      "content-type": TYPES.html as string,
      "cache-control": "no-cache",
      "content-security-policy": UI_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
    },
  });
}

function asset(name: string): Response {
  const path = files().get(`assets/${name}`);
  if (!path) throw AppError.notFound(`No asset /app/assets/${name}`);
  const ext = name.slice(name.lastIndexOf(".") + 1);
  return new Response(Bun.file(path), {
    headers: {
      "content-type": TYPES[ext] ?? "application/octet-stream",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    },
  });
}

export function webRoutes() {
  return new Elysia({ name: "atrium/web" })
    .get("/app/", page, { detail: { hide: true } })
    .get(
      "/favicon.ico",
      () =>
        new Response(Bun.file(iconPath), {
          headers: { "content-type": "image/png", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    )
    .get("/app/assets/:name", ({ params }) => asset(params.name), { detail: { hide: true } })
    .get(
      "/app/*",
      ({ params }) => {
        if (params["*"].startsWith("assets/")) throw AppError.notFound(`No asset /app/${params["*"]}`);
        return page();
      },
      { detail: { hide: true } },
    );
}
