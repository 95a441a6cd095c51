/**
 * The provider catalog every family shares (docs/design.md §6): eight providers, the environment
 * variable whose presence marks each as configured, and the model used when a provider is picked
 * without a model. Order matters: the first configured provider supplies the default model.
 */

export interface ProviderInfo {
  id: string;
  name: string;
  envVarName: string;
  /** Model id (without the provider prefix) used when this provider is the default. */
  defaultModel: string;
  /** Providers whose credential is a key (scrubbed from logs); the others name a file or a URL. */
  secret: boolean;
}

export const PROVIDERS: readonly ProviderInfo[] = [
  {
    id: "amazon-bedrock",
    name: "Amazon Bedrock",
    envVarName: "AWS_ACCESS_KEY_ID",
    defaultModel: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    secret: true,
  },
  { id: "openai", name: "OpenAI", envVarName: "OPENAI_API_KEY", defaultModel: "gpt-5-mini", secret: true },
  {
    id: "anthropic",
    name: "Anthropic",
    envVarName: "ANTHROPIC_API_KEY",
    defaultModel: "claude-sonnet-4-5",
    secret: true,
  },
  {
    id: "google-vertex",
    name: "Google Vertex AI",
    envVarName: "GOOGLE_APPLICATION_CREDENTIALS",
    defaultModel: "gemini-2.5-flash",
    secret: false,
  },
  {
    id: "google",
    name: "Google Gemini",
    envVarName: "GEMINI_API_KEY",
    defaultModel: "gemini-2.5-flash",
    secret: true,
  },
  {
    id: "mistral",
    name: "Mistral",
    envVarName: "MISTRAL_API_KEY",
    defaultModel: "mistral-medium-latest",
    secret: true,
  },
  {
    id: "groq",
    name: "Groq",
    envVarName: "GROQ_API_KEY",
    defaultModel: "llama-3.3-70b-versatile",
    secret: true,
  },
  { id: "ollama", name: "Ollama", envVarName: "OLLAMA_BASE_URL", defaultModel: "llama3.2", secret: false },
];

/** Extra credential variables of providers whose SDKs read more than one (scrubbed from logs too). */
export const EXTRA_SECRET_VARS = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "ANTHROPIC_OAUTH_TOKEN"];

export function providerInfo(id: string): ProviderInfo | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

/** Every secret variable name the catalog knows. */
export function secretVarNames(): string[] {
  return [...PROVIDERS.filter((p) => p.secret).map((p) => p.envVarName), ...EXTRA_SECRET_VARS];
}
