/**
 * Attachments (multipart upload, size bound, sha256, owner metadata, a text attachment bound to
 * `context`), artifacts (only from create_artifact in a turn, public after commit, bytes verified against
 * the stored sha256), and skills (cards, selection semantics, load_skill restricted to the selection).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestApp } from "../helpers/app.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

let t: TestApp;
let session: string;
beforeAll(async () => {
  t = await turnsApp({ edits: [["max_upload_bytes = 10485760", "max_upload_bytes = 4096"]] });
  session = await createSession(t);
});
afterAll(() => t.close());

const upload = (content: string, name = "data.csv", type = "text/csv") => {
  const form = new FormData();
  form.append("file", new File([content], name, { type }));
  return t.json<{ id: string; sha256: string; byteSize: number; filename: string; mediaType: string }>(
    "/api/attachments",
    {
      method: "POST",
      body: form,
    },
  );
};
const py = (...blocks: string[]) => blocks.map((b) => `\`\`\`python\n${b}\n\`\`\``).join("\n");

describe("attachments", () => {
  test("upload stores bytes with their sha256; metadata for the owner; bounded size", async () => {
    const csv = "a,b\n1,2\n3,4\n";
    const up = await upload(csv);
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ filename: "data.csv", mediaType: "text/csv", byteSize: csv.length });
    expect(up.body.sha256).toBe(new Bun.CryptoHasher("sha256").update(csv).digest("hex"));
    expect((await t.json(`/api/attachments/${up.body.id}`)).body).toEqual(up.body);
    expect((await t.json("/api/attachments/att_nope")).status).toBe(404);
    expect((await upload("x".repeat(5000))).status).toBe(413);
    expect((await t.json("/api/attachments", { method: "POST", body: new FormData() })).status).toBe(422);
  });

  test("a single text attachment is bound to `context` in the turn", async () => {
    const up = await upload("a,b\n1,2\n3,4\n");
    const { events } = await runTurn(t, session, {
      text: py(
        "rows = context.strip().splitlines()\nprint(len(rows), rows[0])",
        "try:\n    propose_memory('x', 'y')\nexcept NameError:\n    print('no memory tool')",
      ),
      attachment_ids: [up.body.id],
    });
    expect(events.find((e) => e.type === "attachment")).toMatchObject({
      attachmentId: up.body.id,
      phase: "bound",
      filename: "data.csv",
    });
    const outputs = events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output);
    expect(outputs).toEqual(["3 a,b\n", "no memory tool\n"]);
  });
});

describe("artifacts", () => {
  test("create_artifact makes a candidate that is public after commit, with verified bytes", async () => {
    const { events } = await runTurn(t, session, {
      text: py(
        "a = create_artifact('Weekly report', '# Report\\nAll good.', 'text/markdown', 'report')\nprint(a['byteSize'])",
      ),
    });
    const artifact = events.find((e) => e.type === "artifact");
    expect(artifact).toMatchObject({
      artifactKind: "report",
      title: "Weekly report",
      mediaType: "text/markdown",
      byteSize: 18,
    });
    expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
    const id = artifact?.artifactId as string;
    const meta = await t.json<{ sha256: string; runId: string }>(`/api/artifacts/${id}`);
    expect(meta.status).toBe(200);
    expect(meta.body.sha256).toBe(artifact?.checksumSha256);
    const content = await t.request(`/api/artifacts/${id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get("content-type")).toStartWith("text/markdown");
    expect(await content.text()).toBe("# Report\nAll good.");

    // Bytes that no longer match the stored checksum are never sent.
    writeFileSync(join(t.dataDir, "artifacts", "local", id), "# Report\nAll bad.!");
    const tampered = await t.json<{ error: { code: string } }>(`/api/artifacts/${id}/content`);
    expect(tampered.status).toBe(409);
    expect(tampered.body.error.code).toBe("artifact_checksum_mismatch");
    expect((await t.json("/api/artifacts/art_nope")).status).toBe(404);
  });

  test("a failed turn's candidates never become public", async () => {
    const { events } = await runTurn(t, session, {
      text: py("a = create_artifact('Draft', 'draft')"),
      skill_selections: [{ id: "report-builder", expected_version: "1.0.0" }],
    });
    const id = events.find((e) => e.type === "artifact")?.artifactId as string;
    expect(id).toStartWith("art_");
    expect((await t.json(`/api/artifacts/${id}`)).status).toBe(200);
    const code = py(
      "b = create_artifact('Never', 'x')\nprint(b['artifactId'])",
      "import time\nwhile True:\n    pass",
    );
    const response = t.request(`/api/sessions/${session}/turns`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
      body: JSON.stringify({ text: code }),
    });
    const text = await (async () => {
      const r = await response;
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes('"step":2')) seen += new TextDecoder().decode((await reader.read()).value);
      const runId = seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1];
      await t.request(`/api/runs/${runId}/cancellation`, { method: "PUT" });
      for (let x = await reader.read(); !x.done; x = await reader.read())
        seen += new TextDecoder().decode(x.value);
      return seen;
    })();
    const never = text.match(/"artifactId":"(art_[0-9a-f]+)"/)?.[1];
    expect(never).toBeDefined();
    expect(text).toContain("turn_cancelled");
    expect((await t.json(`/api/artifacts/${never}`)).status).toBe(404);
  });
});

describe("skills", () => {
  test("five system skills as cards; one card by id", async () => {
    const list = await t.json<{
      items: { id: string; version: string; name: string; description: string; resources: string[] }[];
    }>("/api/skills");
    expect(list.body.items.map((s) => s.id).sort()).toEqual([
      "atrium-rlm",
      "data-analysis",
      "long-context",
      "report-builder",
      "workspace-files",
    ]);
    for (const card of list.body.items) {
      expect(card.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(card.description.length).toBeGreaterThan(20);
      expect(card.resources.length).toBeGreaterThan(0);
    }
    expect((await t.json<{ id: string }>("/api/skills/atrium-rlm")).body.id).toBe("atrium-rlm");
    expect((await t.json("/api/skills/nope")).status).toBe(404);
  });

  test("explicit selections are preloaded and load_skill is restricted to them", async () => {
    const { events } = await runTurn(t, session, {
      text: py(
        "print(load_skill('data-analysis')[:20])",
        "try:\n    load_skill('long-context')\nexcept RuntimeError as e:\n    print('refused:', e)",
      ),
      skill_selections: [{ id: "data-analysis", expected_version: "1.0.0" }],
    });
    const skills = events.filter((e) => e.type === "skill");
    expect(skills.map((s) => [s.skillId, s.phase])).toEqual([
      ["data-analysis", "preloaded"],
      ["data-analysis", "loaded"],
    ]);
    expect(skills[0]).toMatchObject({ version: "1.0.0", trust: "system" });
    const outputs = events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output);
    expect(outputs[0]).toBe("# Data analysis\n\nUse\n");
    expect(outputs[1]).toBe("refused: skill 'long-context' is not available in this turn\n");
  });

  test("without a selection any skill loads, at most four per turn", async () => {
    const { events } = await runTurn(t, session, {
      text: py(
        "for s in ['data-analysis', 'atrium-rlm', 'long-context', 'report-builder', 'workspace-files']:\n    try:\n        load_skill(s)\n        print('ok', s)\n    except RuntimeError as e:\n        print('refused', s)",
      ),
    });
    expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toBe(
      "ok data-analysis\nok atrium-rlm\nok long-context\nok report-builder\nrefused workspace-files\n",
    );
  });
});
