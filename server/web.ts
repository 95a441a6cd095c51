/**
 * The chat UI at /app/ (Elysia serves /app the same): index.html, its stylesheet, and web/main.ts bundled for the browser by Bun on
 * first request (kept in memory). Paths below /app/ that are not assets get index.html, so the UI can
 * route on the client. Only files listed here are served: no path from a request touches the disk.
 */
import { Elysia } from "elysia";
import indexFile from "../web/index.html" with { type: "file" };
import stylePath from "../web/style.css" with { type: "file" };
import { AppError } from "./http/errors.ts";

// bun-types declare .html imports as HTML bundles; `type: "file"` makes it a path like any other file.
const indexPath = indexFile as unknown as string;
const MAIN_ENTRY = new URL("../web/main.ts", import.meta.url).pathname;

let bundle: Promise<string> | undefined;

/** Bundles web/main.ts once; a failed build is retried on the next request. */
function mainBundle(): Promise<string> {
  bundle ??= Bun.build({ entrypoints: [MAIN_ENTRY], target: "browser", minify: true }).then(
    async (result) => {
      const output = result.outputs[0];
      if (!result.success || !output) {
        bundle = undefined;
        throw new Error(`web bundle failed: ${result.logs.map(String).join("; ")}`);
      }
      return output.text();
    },
  );
  return bundle;
}

const html = () =>
  new Response(Bun.file(indexPath), { headers: { "content-type": "text/html; charset=utf-8" } });

export function webRoutes() {
  return new Elysia({ name: "atrium/web" })
    .get("/app/", html, { detail: { hide: true } })
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
