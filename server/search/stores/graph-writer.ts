/**
 * Writes an index's merged graph over the one stored, touching only what changed: an entity or
 * relationship whose every stored field (and, for a relationship, both ends' rows) is the same keeps its
 * row and its full-text row; the rest are deleted and inserted again. One changed document of 200 changes
 * a few dozen of hundreds of entities, and the write was most of an incremental run when it rewrote all.
 * The rows, ids and text rows left are those a whole rewrite would leave, bar the row ids nothing cites.
 */
import type { Engine } from "../../storage/db/dialect.ts";
import type { Queryable } from "../../storage/db/port.ts";
import type { EntityRow, IndexRow, MergedEntity, MergedRelationship, RelationshipRow } from "../types.ts";
import { ftsRow, placeholders, RowInserter } from "./sql.ts";

/** An entity row as this writer reads it (its community list is written apart). */
type StoredEntity = Omit<EntityRow, "community_ids">;

/** Rows deleted per statement: far under either engine's limit on bound parameters. */
const DELETE_CHUNK = 500;

/** Replaces the index's entities and relationships; returns entity row ids by name key. */
export async function writeMergedGraph(
  q: Queryable,
  engine: Engine,
  index: IndexRow,
  entities: MergedEntity[],
  relationships: MergedRelationship[],
): Promise<Map<string, number>> {
  const scope = [index.id, index.owner_id];
  const oldEntities = await q.all<StoredEntity>(
    "SELECT id, human_id, name, type, description, degree, mentions, unit_ids FROM search_entities WHERE index_id = ? AND owner_id = ?",
    scope,
  );
  const oldRelationships = await q.all<RelationshipRow>(
    "SELECT id, human_id, source_id, target_id, source, target, description, weight, rank, unit_ids FROM search_relationships WHERE index_id = ? AND owner_id = ?",
    scope,
  );
  // Citation ids stay put across incremental runs: an entity or relationship that survives keeps its
  // human id (so a kept report's [Data: …] still points at it), and a new one takes the next free id.
  const entityHuman = humanIds(oldEntities.map((e) => ({ key: `${e.name}\u0000`, human: e.human_id })));
  const relationshipHuman = humanIds(
    oldRelationships.map((r) => ({ key: `${r.source}\u0000${r.target}`, human: r.human_id })),
  );

  // Entities: decide which rows stay before anything is written.
  const oldByName = new Map(oldEntities.map((e) => [e.name, e]));
  const ids = new Map<string, number>();
  const keptEntities = new Set<number>();
  const newEntities: { e: MergedEntity; human: number }[] = [];
  for (const e of entities) {
    const human = entityHuman(`${e.name}\u0000`);
    const old = oldByName.get(e.name);
    const unitIds = JSON.stringify(e.unitIds);
    if (
      old &&
      !keptEntities.has(old.id) &&
      old.human_id === human &&
      old.type === e.type &&
      old.description === e.description &&
      old.degree === e.degree &&
      old.mentions === e.mentions &&
      old.unit_ids === unitIds
    ) {
      keptEntities.add(old.id);
      ids.set(e.key, old.id);
    } else newEntities.push({ e, human });
  }
  await deleteRows(
    q,
    engine,
    "search_entities",
    oldEntities.filter((e) => !keptEntities.has(e.id)).map((e) => e.id),
  );
  const entityRows = await RowInserter.open(q, engine, "search_entities", [
    "index_id",
    "owner_id",
    "human_id",
    "name",
    "type",
    "description",
    "degree",
    "mentions",
    "unit_ids",
  ]);
  for (const { e, human } of newEntities) {
    const id = await entityRows.insert([
      ...scope,
      human,
      e.name,
      e.type,
      e.description,
      e.degree,
      e.mentions,
      JSON.stringify(e.unitIds),
    ]);
    const fts = ftsRow(engine, "search_entities_fts", id, index, {
      name: e.name,
      description: e.description,
    });
    await q.run(fts.sql, fts.params);
    ids.set(e.key, id);
  }

  // Relationships: kept when every field is the same and both ends kept their rows.
  const names = new Map(entities.map((e) => [e.key, e.name]));
  const oldByPair = new Map(oldRelationships.map((r) => [`${r.source}\u0000${r.target}`, r]));
  const keptRelationships = new Set<number>();
  const newRelationships: { r: MergedRelationship; human: number; source: string; target: string }[] = [];
  for (const r of relationships) {
    const source = names.get(r.source) ?? r.source;
    const target = names.get(r.target) ?? r.target;
    const human = relationshipHuman(`${source}\u0000${target}`);
    const old = oldByPair.get(`${source}\u0000${target}`);
    if (
      old &&
      !keptRelationships.has(old.id) &&
      old.human_id === human &&
      old.source_id === ids.get(r.source) &&
      old.target_id === ids.get(r.target) &&
      old.description === r.description &&
      old.weight === r.weight &&
      old.rank === r.rank &&
      old.unit_ids === JSON.stringify(r.unitIds)
    )
      keptRelationships.add(old.id);
    else newRelationships.push({ r, human, source, target });
  }
  await deleteRows(
    q,
    engine,
    "search_relationships",
    oldRelationships.filter((r) => !keptRelationships.has(r.id)).map((r) => r.id),
  );
  const relationshipRows = await RowInserter.open(q, engine, "search_relationships", [
    "index_id",
    "owner_id",
    "human_id",
    "source_id",
    "target_id",
    "source",
    "target",
    "description",
    "weight",
    "rank",
    "unit_ids",
  ]);
  for (const { r, human, source, target } of newRelationships) {
    const id = await relationshipRows.insert([
      ...scope,
      human,
      ids.get(r.source) as number,
      ids.get(r.target) as number,
      source,
      target,
      r.description,
      r.weight,
      r.rank,
      JSON.stringify(r.unitIds),
    ]);
    // Relationship text is searched by nothing yet: PostgreSQL keeps no text rows for it.
    if (engine === "sqlite")
      await q.run(
        "INSERT INTO search_relationships_fts (rowid, description, owner_id, index_id) VALUES (?, ?, ?, ?)",
        [id, `${r.source} ${r.target} ${r.description}`, index.owner_id, index.id],
      );
  }
  return ids;
}

/**
 * Gives a key its human id: the one it had (the first time it is asked for), else the next free one.
 * The key is `a NUL b` of the two name columns (PostgreSQL text cannot hold a NUL).
 */
function humanIds(rows: { key: string; human: number }[]): (key: string) => number {
  const kept = new Map(rows.map((r) => [r.key, r.human]));
  const taken = new Set<number>();
  let next = rows.reduce((max, r) => Math.max(max, r.human + 1), 0);
  return (k) => {
    const id = kept.get(k);
    if (id !== undefined && !taken.has(id)) {
      taken.add(id);
      return id;
    }
    taken.add(next);
    return next++;
  };
}

/** Deletes rows by id with their FTS5 rows (on PostgreSQL the text rows go with them: ON DELETE CASCADE). */
async function deleteRows(q: Queryable, engine: Engine, table: string, ids: number[]): Promise<void> {
  for (let at = 0; at < ids.length; at += DELETE_CHUNK) {
    const chunk = ids.slice(at, at + DELETE_CHUNK);
    const list = placeholders(chunk.length);
    if (engine === "sqlite") await q.run(`DELETE FROM ${table}_fts WHERE rowid IN (${list})`, chunk);
    await q.run(`DELETE FROM ${table} WHERE id IN (${list})`, chunk);
  }
}
