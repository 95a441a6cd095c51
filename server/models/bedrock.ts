/**
 * Amazon Bedrock with a user's own credentials (Settings → Providers: access key id, secret access key,
 * region). pi-ai's Bedrock provider takes no credentials per request: the AWS SDK inside it reads
 * `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_REGION`) from `process.env` when it signs. So a
 * user's three fields travel as that provider's "API key" (one JSON value, stored as one secret and
 * handed to pi like any key), and the Bedrock provider is wrapped (pi-ai's `setBedrockProviderModule`,
 * which survives pi's `resetApiProviders`): a call whose key is such a value runs with those variables
 * visible to that call's own async work only (an AsyncLocalStorage overlay on `process.env`), so two
 * users' requests at once each sign with their own keys and nothing else in the process sees them.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Api, AssistantMessageEventStream, Context, Model, StreamOptions } from "@mariozechner/pi-ai";
import { failedMessage } from "./reply.ts";

/** pi-ai's module, handed in by pi-ai.ts as it loads it (importing that file here would be a cycle). */
type PiAi = typeof import("@mariozechner/pi-ai");

export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** The fields Settings asks for, in order: each one's name in the request, its label, and its variable. */
export const BEDROCK_FIELDS = [
  { name: "accessKeyId", label: "Access key ID", envVarName: "AWS_ACCESS_KEY_ID", secret: true },
  { name: "secretAccessKey", label: "Secret access key", envVarName: "AWS_SECRET_ACCESS_KEY", secret: true },
  { name: "region", label: "Region", envVarName: "AWS_REGION", secret: false },
] as const;

const MARK = "atrium-bedrock-v1";

/** The one stored value holding the three fields. */
export function encodeBedrockCredentials(c: BedrockCredentials): string {
  return JSON.stringify({ [MARK]: true, ...c });
}

/** The three fields of a stored value, or undefined when it is not one (an env placeholder, a bare key). */
export function decodeBedrockCredentials(value: string | undefined): BedrockCredentials | undefined {
  if (!value?.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(value) as Record<string, unknown>;
    if (v[MARK] !== true) return undefined;
    const { accessKeyId, secretAccessKey, region } = v;
    if (typeof accessKeyId !== "string" || typeof secretAccessKey !== "string" || typeof region !== "string")
      return undefined;
    return { accessKeyId, secretAccessKey, region };
  } catch {
    return undefined;
  }
}

/**
 * Every AWS variable the SDK's credential chain or pi-ai's provider reads, as the call sees it: the
 * user's three, and none of the server's (a server profile, session token or Bedrock bearer token must
 * not mix with the user's keys, nor sign their request instead).
 */
function overlayOf(c: BedrockCredentials): Record<string, string | undefined> {
  return {
    AWS_ACCESS_KEY_ID: c.accessKeyId,
    AWS_SECRET_ACCESS_KEY: c.secretAccessKey,
    AWS_REGION: c.region,
    AWS_DEFAULT_REGION: c.region,
    AWS_SESSION_TOKEN: undefined,
    AWS_CREDENTIAL_EXPIRATION: undefined,
    AWS_CREDENTIAL_SCOPE: undefined,
    AWS_ACCOUNT_ID: undefined,
    AWS_PROFILE: undefined,
    AWS_BEARER_TOKEN_BEDROCK: undefined,
    AWS_BEDROCK_SKIP_AUTH: undefined,
    AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
    AWS_ROLE_ARN: undefined,
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
    AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
  };
}

const overlay = new AsyncLocalStorage<Record<string, string | undefined>>();

/** `process.env` answering the overlay's variables inside a wrapped call, the real ones everywhere else. */
function installEnvOverlay(): void {
  const real = process.env;
  const inCall = (key: string | symbol) => {
    const vars = overlay.getStore();
    return vars && typeof key === "string" && key in vars ? vars : undefined;
  };
  process.env = new Proxy(real, {
    get: (target, key) => {
      const vars = inCall(key);
      return vars ? vars[key as string] : Reflect.get(target, key);
    },
    // Writes go to the real environment as they always did (with the target as receiver: Bun's
    // process.env takes only full data descriptors, which the default trap would not give it).
    set: (target, key, value) => Reflect.set(target, key, value),
    has: (target, key) => {
      const vars = inCall(key);
      return vars ? vars[key as string] !== undefined : Reflect.has(target, key);
    },
    getOwnPropertyDescriptor: (target, key) => {
      const vars = inCall(key);
      if (!vars) return Reflect.getOwnPropertyDescriptor(target, key);
      const value = vars[key as string];
      return value === undefined
        ? undefined
        : { value, writable: true, enumerable: true, configurable: true };
    },
  });
}

type BedrockStream = (
  model: Model<Api>,
  context: Context,
  options?: StreamOptions,
) => AssistantMessageEventStream;
type BedrockModule = { streamBedrock: BedrockStream; streamSimpleBedrock: BedrockStream };

/** pi-ai's own Bedrock provider, loaded on first use (it brings the AWS SDK). */
let realModule: Promise<BedrockModule> | undefined;
const loadReal = () =>
  (realModule ??= import("@mariozechner/pi-ai/bedrock-provider").then(
    (m) => m.bedrockProviderModule as unknown as BedrockModule,
  ));

function wrapped(pi: PiAi, pick: (m: BedrockModule) => BedrockStream): BedrockStream {
  return (model, context, options) => {
    const credentials = decodeBedrockCredentials(options?.apiKey);
    const out = pi.createAssistantMessageEventStream();
    const run = async () => {
      const inner = pick(await loadReal())(
        model,
        context,
        credentials
          ? ({ ...options, apiKey: undefined, region: credentials.region } as StreamOptions)
          : options,
      );
      for await (const event of inner) out.push(event);
      out.end(await inner.result());
    };
    const failed = (error: unknown) => {
      const message = failedMessage(model, error instanceof Error ? error.message : String(error));
      out.push({ type: "error", reason: "error", error: message });
      out.end(message);
    };
    // The overlay holds for this call's async work only: the SDK signs inside it.
    if (credentials) void overlay.run(overlayOf(credentials), run).catch(failed);
    else void run().catch(failed);
    return out;
  };
}

let installed = false;

/** Puts the wrapped Bedrock provider in place once per process (idempotent; pi-ai.ts calls it on load). */
export function installBedrockCredentials(pi: PiAi): void {
  if (installed) return;
  installed = true;
  installEnvOverlay();
  pi.setBedrockProviderModule({
    streamBedrock: wrapped(pi, (m) => m.streamBedrock) as never,
    streamSimpleBedrock: wrapped(pi, (m) => m.streamSimpleBedrock) as never,
  });
}
