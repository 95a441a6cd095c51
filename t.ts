import { runIndex } from "./server/search/index/pipeline.ts";
import { fixtureDocuments, searchDb } from "./tests/search/fixtures.ts";
const { db, store } = searchDb();
await runIndex(store, "local", "default", fixtureDocuments());
console.log(db.query("select source, target, weight from search_relationships where source like '%Tim%' or target like '%Tim%' order by weight desc").all());
console.log(db.query("select count(*) n from search_entities").get());
