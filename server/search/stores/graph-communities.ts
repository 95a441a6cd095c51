/**
 * Writes an index's community hierarchy and reports over the ones stored, touching only what changed: a
 * community with the same members (entity rows) and the same report input (its member hash) keeps its
 * row, its report row and the report's full-text row; only its place (citation id, parent) is updated
 * when the hierarchy around it moved. The rest are deleted and inserted again, and an entity's list of
 * communities is written only when it changed. Rewriting every community and report made a one-document
 * update of a large index cost as much as its reports did to build. Ids and rows left are those a whole
 * rewrite would leave, bar the row ids nothing cites.
 */
import type { Engine } from "../../storage/db/dialect.ts";
import type { Queryable } from "../../storage/db/port.ts";
import type { IndexRow, Report } from "../types.ts";
import { deleteRows } from "./graph-writer.ts";
import { ftsRow, RowInserter } from "./sql.ts";

/** One community of the hierarchy as the pipeline found it; its citation id is its place in the list. */
export interface CommunityToWrite {
  level: number;
  /** The parent's place in the list (parents come first), or null at level 0. */
  parent: number | null;
  /** Entity row ids. */
  members: number[];
  /** The report input's hash (reports are reused by it). */
  hash: string;
  leaf: boolean;
  report: Report;
  content: string;
}

interface StoredRow {
  id: number;
  human_id: number;
  parent_id: number | null;
  entity_ids: string;
  member_hash: string;
  report_id: number;
  report_human: number;
  leaf: number;
}

/**
 * Replaces the index's communities and reports with `list` (only the rows that changed) and sets each
 * entity's communities where they changed (`current`: entity row id → its stored community list, as JSON).
 * Returns how many communities kept their rows.
 */
export async function writeCommunities(
  q: Queryable,
  engine: Engine,
  index: IndexRow,
  list: CommunityToWrite[],
  current: Map<number, string>,
): Promise<{ kept: number }> {
  const scope = [index.id, index.owner_id];
  const stored = await q.all<StoredRow>(
    `SELECT c.id, c.human_id, c.parent_id, c.entity_ids, c.member_hash, r.id AS report_id, r.human_id AS report_human, r.leaf
     FROM search_communities c JOIN search_reports r ON r.community_id = c.id
     WHERE c.index_id = ? AND c.owner_id = ?`,
    scope,
  );
  // The member hash says what the report was made of; the entity ids say which rows it holds.
  const key = (hash: string, entityIds: string) => `${hash}\u0000${entityIds}`;
  const byKey = new Map(stored.map((s) => [key(s.member_hash, s.entity_ids), s]));
  // Which stored rows stay, decided before anything is written. A community whose leaf flag changed is
  // written again: the flag is in its report's full-text row.
  const keep = list.map((c) => {
    const old = byKey.get(key(c.hash, JSON.stringify(c.members)));
    if (!old || old.leaf !== (c.leaf ? 1 : 0)) return undefined;
    byKey.delete(key(c.hash, JSON.stringify(c.members)));
    return old;
  });
  const kept = new Set(keep.flatMap((old) => (old ? [old.id] : [])));
  const gone = stored.filter((s) => !kept.has(s.id));
  await deleteRows(
    q,
    engine,
    "search_reports",
    gone.map((s) => s.report_id),
  );
  await deleteRows(
    q,
    engine,
    "search_communities",
    gone.map((s) => s.id),
    false,
  );

  const communityRows = await RowInserter.open(q, engine, "search_communities", [
    "index_id",
    "owner_id",
    "human_id",
    "level",
    "parent_id",
    "entity_ids",
    "member_hash",
  ]);
  const reportRows = await RowInserter.open(q, engine, "search_reports", [
    "index_id",
    "owner_id",
    "community_id",
    "human_id",
    "level",
    "title",
    "summary",
    "rating",
    "rating_explanation",
    "findings",
    "content",
    "member_hash",
    "leaf",
  ]);
  // In order, so a parent's row id (kept or new) is known before its children's.
  const rowIds: number[] = [];
  for (const [human, c] of list.entries()) {
    const parentId = c.parent === null ? null : (rowIds[c.parent] as number);
    const old = keep[human];
    if (old) {
      rowIds.push(old.id);
      const oldParent = old.parent_id === null ? null : Number(old.parent_id);
      if (old.human_id !== human || oldParent !== parentId)
        await q.run("UPDATE search_communities SET human_id = ?, parent_id = ? WHERE id = ?", [
          human,
          parentId,
          old.id,
        ]);
      if (old.report_human !== human)
        await q.run("UPDATE search_reports SET human_id = ? WHERE id = ?", [human, old.report_id]);
      continue;
    }
    const id = await communityRows.insert([
      ...scope,
      human,
      c.level,
      parentId,
      JSON.stringify(c.members),
      c.hash,
    ]);
    rowIds.push(id);
    const reportId = await reportRows.insert([
      ...scope,
      id,
      human,
      c.level,
      c.report.title,
      c.report.summary,
      c.report.rating,
      c.report.rating_explanation,
      JSON.stringify(c.report.findings),
      c.content,
      c.hash,
      c.leaf ? 1 : 0,
    ]);
    const fts = ftsRow(
      engine,
      "search_reports_fts",
      reportId,
      index,
      { title: c.report.title, content: c.content },
      { level: c.level, leaf: c.leaf ? 1 : 0 },
    );
    await q.run(fts.sql, fts.params);
  }

  const memberships = new Map<number, number[]>();
  for (const [human, c] of list.entries())
    for (const member of c.members) {
      const ids = memberships.get(member);
      if (ids) ids.push(rowIds[human] as number);
      else memberships.set(member, [rowIds[human] as number]);
    }
  for (const [entityId, stored] of current) {
    const want = JSON.stringify(memberships.get(entityId) ?? []);
    if (want !== stored)
      await q.run("UPDATE search_entities SET community_ids = ? WHERE id = ? AND owner_id = ?", [
        want,
        entityId,
        index.owner_id,
      ]);
  }
  return { kept: kept.size };
}
