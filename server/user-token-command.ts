/**
 * `atrium user token create|list|revoke EMAIL ...`: an admin acting on any account's personal access
 * tokens from the server's own machine (the data dir), as `atrium token` does for a signed-in user over
 * HTTP. A token revoked here is refused by a running server at once (it reads the database), and its
 * open connections close within a second. The new token is printed once.
 */
import { table } from "../cli/token.ts";
import type { AccessTokens } from "./auth/access-tokens.ts";
import { AppError } from "./http/errors.ts";

interface Values {
  name?: string;
  scope?: string[];
  days?: string;
}

export async function userToken(
  tokens: AccessTokens,
  owner: string,
  action: string | undefined,
  id: string | undefined,
  values: Values,
  io: { out(text: string): void },
): Promise<number> {
  switch (action) {
    case "create": {
      if (!values.name) throw new AppError("invalid", "token create needs --name");
      const days = values.days === undefined ? undefined : Number(values.days);
      const created = await tokens.create(owner, {
        name: values.name,
        scopes: values.scope ?? [],
        expiresInDays: days,
      });
      io.out(
        `token: ${created.token}\nid: ${created.id}\nscopes: ${created.scopes.join(", ")}\nexpires: ${created.expiresAt ?? "never"}\n(shown only now)\n`,
      );
      return 0;
    }
    case "list":
      io.out(table(await tokens.list(owner)));
      return 0;
    case "revoke":
      if (!id) throw new AppError("invalid", "token revoke needs EMAIL and the token's ID");
      await tokens.revoke(owner, id);
      io.out(`revoked ${id}\n`);
      return 0;
    default:
      throw new AppError("invalid", "token needs create, list or revoke, then EMAIL");
  }
}
