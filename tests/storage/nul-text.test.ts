/**
 * PostgreSQL's text has no room for a NUL character (U+0000), which SQLite stores: on PostgreSQL such a
 * value is the caller's bad input, a 4xx in the family's envelope that changes nothing, never a 500.
 */
import { expect, test } from "bun:test";
import { createTestApp, postJson } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";

test("a NUL character in stored text is a 4xx on PostgreSQL, and the row stays as it was", async () => {
  const t = await createTestApp({ env: { APP_DATABASE_URL: await freshPostgresDatabase() } });
  try {
    const made = await t.json<{ id: string }>("/api/sessions", postJson({ title: "kept" }));
    expect(made.status).toBe(200);
    const patch = (title: string) =>
      t.json<{ error?: { message: string } }>(`/api/sessions/${made.body.id}`, {
        ...postJson({ title }),
        method: "PATCH",
      });
    const refused = await patch("a\u0000b");
    expect(refused.status).toBe(422); // the turns family answers bad values 422
    expect(JSON.stringify(refused.body)).toContain("NUL character");
    const after = await t.json<{ title: string }>(`/api/sessions/${made.body.id}`);
    expect(after.body.title).toBe("kept");
    expect((await patch("renamed")).status).toBe(200);
  } finally {
    await t.close();
  }
});
