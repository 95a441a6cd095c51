/**
 * SQL for turn sessions. Every query is scoped by owner: a row of another owner is never returned (the
 * services answer 404).
 */
import { isoNow } from "../../lib/clock.ts";
import type { Store } from "../../storage/store.ts";

export interface TurnSessionRow {
  id: string;
  owner_id: string;
  title: string;
  archived: number;
  created_at: string;
  updated_at: string;
}

export class TurnSessionStore {
  constructor(private readonly store: Store) {}

  create(owner: string, id: string, title: string): TurnSessionRow {
    const at = isoNow();
    this.store.run(
      "INSERT INTO turn_sessions (id, owner_id, title, archived, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)",
      [id, owner, title, at, at],
    );
    return this.get(owner, id) as TurnSessionRow;
  }

  get(owner: string, id: string): TurnSessionRow | undefined {
    return this.store.get<TurnSessionRow>("SELECT * FROM turn_sessions WHERE id = ? AND owner_id = ?", [
      id,
      owner,
    ]);
  }

  list(owner: string, limit: number, offset: number, archived?: boolean): TurnSessionRow[] {
    if (archived === undefined) {
      return this.store.all<TurnSessionRow>(
        "SELECT * FROM turn_sessions WHERE owner_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
        [owner, limit, offset],
      );
    }
    return this.store.all<TurnSessionRow>(
      "SELECT * FROM turn_sessions WHERE owner_id = ? AND archived = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
      [owner, archived ? 1 : 0, limit, offset],
    );
  }

  count(owner: string, archived?: boolean): number {
    const row =
      archived === undefined
        ? this.store.get<{ n: number }>("SELECT count(*) AS n FROM turn_sessions WHERE owner_id = ?", [owner])
        : this.store.get<{ n: number }>(
            "SELECT count(*) AS n FROM turn_sessions WHERE owner_id = ? AND archived = ?",
            [owner, archived ? 1 : 0],
          );
    return row?.n ?? 0;
  }

  update(
    owner: string,
    id: string,
    patch: { title?: string; archived?: boolean },
  ): TurnSessionRow | undefined {
    const current = this.get(owner, id);
    if (!current) return undefined;
    this.store.run(
      "UPDATE turn_sessions SET title = ?, archived = ?, updated_at = ? WHERE id = ? AND owner_id = ?",
      [
        patch.title ?? current.title,
        patch.archived === undefined ? current.archived : patch.archived ? 1 : 0,
        isoNow(),
        id,
        owner,
      ],
    );
    return this.get(owner, id);
  }
}
