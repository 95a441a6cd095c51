/**
 * SQL for turn sessions, over the database port (either engine). Every query is scoped by owner: a row of
 * another owner is never returned (the services answer 404).
 */
import { isoNow } from "../../lib/clock.ts";
import type { Db } from "../../storage/db/port.ts";

export interface TurnSessionRow {
  id: string;
  owner_id: string;
  title: string;
  archived: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS = "id, owner_id, title, archived, created_at, updated_at";

export class TurnSessionStore {
  constructor(private readonly db: Db) {}

  async create(owner: string, id: string, title: string): Promise<TurnSessionRow> {
    const at = isoNow();
    const row = await this.db.get<TurnSessionRow>(
      `INSERT INTO turn_sessions (id, owner_id, title, archived, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)
       RETURNING ${COLUMNS}`,
      [id, owner, title, at, at],
    );
    return row as TurnSessionRow;
  }

  get(owner: string, id: string): Promise<TurnSessionRow | undefined> {
    return this.db.get<TurnSessionRow>(`SELECT ${COLUMNS} FROM turn_sessions WHERE id = ? AND owner_id = ?`, [
      id,
      owner,
    ]);
  }

  list(owner: string, limit: number, offset: number, archived?: boolean): Promise<TurnSessionRow[]> {
    if (archived === undefined) {
      return this.db.all<TurnSessionRow>(
        `SELECT ${COLUMNS} FROM turn_sessions WHERE owner_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
        [owner, limit, offset],
      );
    }
    return this.db.all<TurnSessionRow>(
      `SELECT ${COLUMNS} FROM turn_sessions WHERE owner_id = ? AND archived = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, archived ? 1 : 0, limit, offset],
    );
  }

  async count(owner: string, archived?: boolean): Promise<number> {
    const row =
      archived === undefined
        ? await this.db.get<{ n: number }>("SELECT count(*) AS n FROM turn_sessions WHERE owner_id = ?", [
            owner,
          ])
        : await this.db.get<{ n: number }>(
            "SELECT count(*) AS n FROM turn_sessions WHERE owner_id = ? AND archived = ?",
            [owner, archived ? 1 : 0],
          );
    return row?.n ?? 0;
  }

  /** One statement: the fields not in the patch keep their stored values. */
  update(
    owner: string,
    id: string,
    patch: { title?: string; archived?: boolean },
  ): Promise<TurnSessionRow | undefined> {
    return this.db.get<TurnSessionRow>(
      `UPDATE turn_sessions SET title = COALESCE(?, title), archived = COALESCE(?, archived), updated_at = ?
       WHERE id = ? AND owner_id = ? RETURNING ${COLUMNS}`,
      [
        patch.title ?? null,
        patch.archived === undefined ? null : patch.archived ? 1 : 0,
        isoNow(),
        id,
        owner,
      ],
    );
  }
}
