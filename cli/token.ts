/**
 * `atrium token create|list|revoke`: a signed-in user's personal access tokens on a team server, over
 * `/api/auth/tokens` with the session `atrium login` saved for the URL (an access token cannot manage
 * tokens). `create` prints the new token alone on stdout, so a script can capture it, and what it is on
 * stderr: the token is shown this once.
 */
import { Api } from "./api.ts";
import { parse, runCommand, UsageError } from "./args.ts";
import { clean } from "./style.ts";

export const USAGE = `Usage: atrium token create --name NAME --scope SCOPE [--scope SCOPE]... [--days N] [--url URL]
       atrium token list [--url URL]
       atrium token revoke ID [--url URL]

  --name NAME     what the token is for
  --scope SCOPE   chat, turns, search, agents (every route of the family), chat:read, turns:read,
                  search:read, agents:read (GET only), mcp (the MCP server at /mcp); repeatable
  --days N        expires after N days (1-365; default: never)
  --url URL       the team server (default: $APP_BASE_URL, else http://127.0.0.1:8000)

Sign in first with \`atrium login --url URL\`: tokens are managed with your session.
`;

interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  expired: boolean;
}

export function main(argv: string[]): Promise<number> {
  return runCommand("token", USAGE, async () => {
    const { values, positionals } = parse(argv, {
      url: { type: "string" },
      name: { type: "string" },
      scope: { type: "string", multiple: true },
      days: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    const [action, id, extra] = positionals;
    if (values.help || !action) {
      process.stdout.write(USAGE);
      return values.help ? 0 : 2;
    }
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`);
    const api = Api.from(values.url);
    switch (action) {
      case "create": {
        if (!values.name) throw new UsageError("create needs --name");
        if (!values.scope?.length) throw new UsageError("create needs at least one --scope");
        const days = values.days === undefined ? undefined : Number(values.days);
        if (days !== undefined && !Number.isInteger(days))
          throw new UsageError("--days must be a whole number");
        const created = await api.send<TokenView & { token: string }>("POST", "/api/auth/tokens", {
          name: values.name,
          scopes: values.scope,
          ...(days === undefined ? {} : { expiresInDays: days }),
        });
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(
          clean(
            `created token '${created.name}' (${created.id}) with ${created.scopes.join(", ")}, ${created.expiresAt ? `expiring ${created.expiresAt}` : "not expiring"}; it is shown only now\n`,
          ),
        );
        return 0;
      }
      case "list": {
        const { tokens } = await api.get<{ tokens: TokenView[] }>("/api/auth/tokens");
        process.stdout.write(clean(table(tokens)));
        return 0;
      }
      case "revoke": {
        if (!id) throw new UsageError("revoke needs the token's ID (atrium token list shows it)");
        await api.send("DELETE", `/api/auth/tokens/${encodeURIComponent(id)}`);
        process.stdout.write(clean(`revoked ${id}\n`));
        return 0;
      }
      default:
        throw new UsageError(`unknown action '${action}'`);
    }
  });
}

/** Tokens as tab-separated columns with a header (the same shape `atrium user token list` prints). */
export function table(tokens: TokenView[]): string {
  if (tokens.length === 0) return "no tokens\n";
  const rows = tokens.map((x) =>
    [
      x.id,
      x.name,
      x.scopes.join(","),
      x.createdAt,
      x.lastUsedAt ?? "never",
      x.expired ? `expired ${x.expiresAt}` : (x.expiresAt ?? "never"),
    ].join("\t"),
  );
  return `${["id", "name", "scopes", "created", "last used", "expires"].join("\t")}\n${rows.join("\n")}\n`;
}
