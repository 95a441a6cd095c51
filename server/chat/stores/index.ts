/**
 * The chat mirror in SQLite (docs/design.md §5): sessions, runs with their tool calls and file
 * mutations, and stored provider keys, one store per concern over the app's database. `ChatStore`
 * holds the three and the one statement that spans them (erasing an account).
 */
import type { Store } from "../../storage/store.ts";
import { ChatProviderKeyStore } from "./provider-keys.ts";
import { ChatRunStore } from "./runs.ts";
import { type ChatSessionRow, ChatSessionStore } from "./sessions.ts";

export class ChatStore {
  readonly sessions: ChatSessionStore;
  readonly runs: ChatRunStore;
  readonly providerKeys: ChatProviderKeyStore;

  constructor(private readonly db: Store) {
    this.sessions = new ChatSessionStore(db);
    this.runs = new ChatRunStore(db);
    this.providerKeys = new ChatProviderKeyStore(db);
  }

  /** Erases every mirrored session and stored provider key of an owner in one transaction. */
  eraseOwner(owner: string): { sessions: ChatSessionRow[]; providers: number } {
    return this.db.tx(() => ({
      sessions: this.sessions.eraseOwner(owner),
      providers: this.providerKeys.eraseOwner(owner),
    }));
  }
}
