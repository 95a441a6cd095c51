/**
 * The chat runtime's `web_fetch` tool: the model reads one public HTTPS page or JSON document
 * (fetcher.ts decides what may be reached). A refusal is the tool's error text, never a crash.
 */
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { piTypeBox } from "../../../models/pi-sdk.ts";
import { type WebFetchOptions, webFetch } from "./fetcher.ts";

export const WEB_FETCH_TOOL = "web_fetch";

/** typebox 1.x loads with pi (models/pi-sdk.ts); the tool is built once pi has loaded. */
const params = () =>
  piTypeBox().Type.Object({
    url: piTypeBox().Type.String({
      description: "A public https:// URL (GitHub/GitLab blob links are fetched raw)",
    }),
  });
type Params = ReturnType<typeof params>;

export function webFetchTool(options: WebFetchOptions = {}): ToolDefinition<Params> {
  return {
    name: WEB_FETCH_TOOL,
    label: "Fetch a web page",
    description:
      "Fetch one public HTTPS URL and return its text (text/* or JSON only, up to 1 MiB). Local, private and link-local addresses are refused.",
    parameters: params(),
    async execute(_toolCallId, params, signal) {
      const result = await webFetch(params.url, options, signal);
      const note = result.truncated ? "\n\n[truncated at 1 MiB]" : "";
      return {
        content: [
          {
            type: "text",
            text: `${result.url} (${result.status}, ${result.contentType})\n\n${result.content}${note}`,
          },
        ],
        details: {
          url: result.url,
          status: result.status,
          contentType: result.contentType,
          truncated: result.truncated,
        },
      };
    },
  };
}
