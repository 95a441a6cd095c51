/**
 * The bulk steps applied to pyodide's Emscripten module (server/sandbox/emscripten-patches.ts): both
 * match the pinned build exactly once; a text without them, or with a piece twice, is left as it is;
 * the table patch hands out the very slots the original did, frees included; the restore patch leaves
 * memory byte for byte as a whole copy would, a stale non-zero block under a zero one included. An
 * interpreter restored from a snapshot with them is tested in snapshot.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatches } from "../../server/sandbox/emscripten-patches.ts";
import { pyodideDir } from "../../server/sandbox/isolation.ts";

const ORIGINAL_SLOT =
  'var getEmptyTableSlot=()=>{if(freeTableIndexes.length){return freeTableIndexes.pop()}return wasmTable["grow"](1)};';
const ORIGINAL_RESTORE = "function restore(Module,t,l){return Module.HEAP8.set(t),l}";

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("applyPatches", () => {
  test("both patches match the pinned pyodide build", () => {
    const text = readFileSync(join(pyodideDir(), "pyodide.asm.mjs"), "utf8");
    expect(applyPatches(text).applied).toEqual(["table", "restore"]);
  });

  test("a text without the pieces, or with one twice, is left as it is", () => {
    expect(applyPatches("var x=1;")).toEqual({ text: "var x=1;", applied: [] });
    const twice = `${ORIGINAL_SLOT}${ORIGINAL_SLOT}`;
    expect(applyPatches(twice)).toEqual({ text: twice, applied: [] });
  });

  test("the table patch gives every caller the slot the original gave, frees included", () => {
    const slots = (code: string) => {
      const make = new Function(
        `var wasmTable=new WebAssembly.Table({initial:5,element:"anyfunc"});var freeTableIndexes=[];${code}
         return {take:getEmptyTableSlot,free:(i)=>freeTableIndexes.push(i)};`,
      ) as () => { take(): number; free(i: number): void };
      const table = make();
      const next = random(7);
      const taken: number[] = [];
      const held: number[] = [];
      for (let i = 0; i < 3000; i++) {
        if (held.length > 0 && next() < 0.2)
          table.free(held.splice(Math.floor(next() * held.length), 1)[0] as number);
        else {
          const slot = table.take();
          taken.push(slot);
          held.push(slot);
        }
      }
      return taken;
    };
    const patched = applyPatches(ORIGINAL_SLOT);
    expect(patched.applied).toEqual(["table"]);
    expect(slots(patched.text)).toEqual(slots(ORIGINAL_SLOT));
  });

  test("the restore patch leaves memory exactly as a whole copy does", () => {
    const patched = applyPatches(ORIGINAL_RESTORE);
    expect(patched.applied).toEqual(["restore"]);
    const restoreWith = (code: string) =>
      new Function(`${code}\nreturn restore;`)() as (
        m: { HEAP8: Int8Array },
        t: Uint8Array,
        l: unknown,
      ) => unknown;
    const block = 65536;
    const next = random(11);
    // Blocks of every kind: zero in both, zero in the image over stale bytes, data over zero, data over data,
    // and a short last block; the image a view at an odd offset of a larger buffer.
    const kinds = ["zero", "stale", "data", "data-over-data", "zero", "stale"];
    const length = kinds.length * block + 1234;
    const backing = new Uint8Array(length + 3);
    const image = backing.subarray(3);
    const fresh = new Int8Array(length + block);
    kinds.forEach((kind, i) => {
      for (let b = i * block; b < (i + 1) * block; b++) {
        if (kind === "data" || kind === "data-over-data") image[b] = 1 + Math.floor(next() * 255);
        if (kind === "stale" || kind === "data-over-data") fresh[b] = 1 + Math.floor(next() * 120);
      }
    });
    for (let b = kinds.length * block; b < length; b++) image[b] = next() < 0.5 ? 0 : 9;
    fresh[length + 5] = 42; // beyond the image: untouched by either
    const whole = { HEAP8: fresh.slice() };
    const bulk = { HEAP8: fresh.slice() };
    expect(restoreWith(ORIGINAL_RESTORE)(whole, image, "json")).toBe("json");
    expect(restoreWith(patched.text)(bulk, image, "json")).toBe("json");
    expect(Buffer.from(bulk.HEAP8.buffer).equals(Buffer.from(whole.HEAP8.buffer))).toBe(true);
    expect(bulk.HEAP8[length + 5]).toBe(42);
  });
});
