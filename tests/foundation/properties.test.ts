/** Property tests (fast-check) for the small parsers every request goes through. */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { deepMerge } from "../../server/config/policy.ts";
import { pathOf } from "../../server/http/path.ts";
import { encodeSse } from "../../server/http/sse.ts";
import { formatModelId, parseModelId } from "../../server/models/ids.ts";

test("pathOf agrees with URL.pathname", () => {
  fc.assert(
    fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      expect(pathOf(new Request(url))).toBe(new URL(url).pathname);
    }),
  );
});

test("model ids round-trip", () => {
  const provider = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,15}$/);
  const model = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,30}$/);
  fc.assert(
    fc.property(provider, model, (p, m) => {
      expect(parseModelId(formatModelId({ provider: p, model: m }))).toEqual({ provider: p, model: m });
    }),
  );
});

test("an SSE frame carries any text intact (line breaks normalised to \\n)", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), (text) => {
      const frame = encodeSse({ event: "text", data: text });
      expect(frame.endsWith("\n\n")).toBe(true);
      const body = frame.slice(0, -2);
      // Exactly one blank line: the frame cannot be split early by its content.
      expect(body.includes("\n\n")).toBe(false);
      const data = body
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      expect(data).toBe(text.replace(/\r\n|\r/g, "\n"));
    }),
  );
});

test("deepMerge keeps every base key and lets the override win", () => {
  const table = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 5 }),
    fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.integer())),
  );
  fc.assert(
    fc.property(table, table, (base, over) => {
      const merged = deepMerge({ section: base }, { section: over }).section as Record<string, unknown>;
      for (const [key, value] of Object.entries(over)) expect(merged[key]).toEqual(value);
      for (const key of Object.keys(base)) expect(key in merged).toBe(true);
    }),
  );
});
