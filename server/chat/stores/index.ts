/**
 * The chat mirror on the database port (docs/design.md §5, docs/database.md): sessions, runs with
 * their tool calls and file mutations, and stored provider keys, one store per concern. `ChatStore`
 * holds the three and the one transaction that spans them (erasing an account).
 */
import type { Db } from "../../storage/db/port.ts";
import { ChatProviderKeyStore } from "./provider-keys.ts";
import { ChatRunStore } from "./runs.ts";
import { type ChatSessionRow, ChatSessionStore } from "./sessions.ts";

export class ChatStore {
  readonly sessions: ChatSessionStore;
  readonly runs: ChatRunStore;
  readonly providerKeys: ChatProviderKeyStore;

  constructor(private readonly db: Db) {
    this.sessions = new ChatSessionStore(db);
    this.runs = new ChatRunStore(db);
    this.providerKeys = new ChatProviderKeyStore(db);
  }

  /**
   * Erases every mirrored session and stored provider key of an owner in one transaction; `erased`
   * runs once it committed (never when it rolled back), with what was erased.
   */
  eraseOwner(
    owner: string,
    erased?: (result: { sessions: ChatSessionRow[]; providers: number }) => void,
  ): Promise<{ sessions: ChatSessionRow[]; providers: number }> {
    return this.db.tx(async (tx) => {
      const result = {
        sessions: await this.sessions.eraseOwner(owner, tx),
        providers: await this.providerKeys.eraseOwner(owner, tx),
      };
      if (erased) tx.afterCommit(() => erased(result));
      return result;
    });
  }
}
