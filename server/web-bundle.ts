/**
 * Bundles the chat UI's script (web/main.ts) for the browser. From source, web.ts calls it on the first
 * request for /app/assets/main.js; scripts/build.ts calls it before compiling the binary and embeds the
 * result (web-prebuilt.ts), because a compiled binary has neither the web/ sources nor their packages.
 */
export const WEB_ENTRY = new URL("../web/main.ts", import.meta.url).pathname;

export async function bundleWebUi(): Promise<string> {
  const result = await Bun.build({ entrypoints: [WEB_ENTRY], target: "browser", minify: true });
  const output = result.outputs.find((o) => o.kind === "entry-point");
  if (!result.success || !output) throw new Error(`web bundle failed: ${result.logs.map(String).join("; ")}`);
  return output.text();
}
